// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Frame-granular round-robin AXI-Stream arbiter (N inputs to one output)
 *
 * An input is granted at a frame boundary and keeps the grant until its last
 * beat; the next grant goes to the first requester after the last one
 * granted. The first beat of a frame passes in the cycle it is granted.
 */
module frame_arbiter #
(
    // number of inputs
    parameter PORTS = 4,
    // width of the AXI-Stream data bus in bits
    parameter DATA_WIDTH = 64,
    // tkeep width (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // tuser width
    parameter USER_WIDTH = 1,
    parameter SEL_WIDTH = (PORTS > 1) ? clog2(PORTS) : 1
)
(
    input  wire                          clk,
    input  wire                          rst,

    input  wire [PORTS*DATA_WIDTH-1:0]   s_axis_tdata,
    input  wire [PORTS*KEEP_WIDTH-1:0]   s_axis_tkeep,
    input  wire [PORTS-1:0]              s_axis_tvalid,
    output wire [PORTS-1:0]              s_axis_tready,
    input  wire [PORTS-1:0]              s_axis_tlast,
    input  wire [PORTS*USER_WIDTH-1:0]   s_axis_tuser,

    output wire [DATA_WIDTH-1:0]         m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]         m_axis_tkeep,
    output wire                          m_axis_tvalid,
    input  wire                          m_axis_tready,
    output wire                          m_axis_tlast,
    output wire [USER_WIDTH-1:0]         m_axis_tuser
);

// ceil(log2(value)), 0 for 0 and 1: $clog2 as a Verilog 2001 constant function
function integer clog2;
    input integer value;
    integer v, n;
    begin
        n = 0;
        for (v = value - 1; v > 0; v = v >> 1) begin
            n = n + 1;
        end
        clog2 = n;
    end
endfunction

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (PORTS < 1 || (1 << SEL_WIDTH) < PORTS) begin : check_ports
        param_error_PORTS_must_be_at_least_1_and_fit_SEL_WIDTH bad();
    end
endgenerate

reg locked_reg;
reg [SEL_WIDTH-1:0] sel_reg;   // granted input while locked
reg [SEL_WIDTH-1:0] last_reg;  // last input granted

reg [SEL_WIDTH-1:0] pick;
reg pick_valid;
reg [SEL_WIDTH-1:0] sel;
reg [SEL_WIDTH:0] cand;
integer k;

always @* begin
    // round robin: the first requester after last_reg
    pick = {SEL_WIDTH{1'b0}};
    pick_valid = 1'b0;
    for (k = PORTS; k >= 1; k = k - 1) begin
        cand = {1'b0, last_reg} + k[SEL_WIDTH:0];
        if (cand >= PORTS[SEL_WIDTH:0]) begin
            cand = cand - PORTS[SEL_WIDTH:0];
        end
        if (s_axis_tvalid[cand[SEL_WIDTH-1:0]]) begin
            pick = cand[SEL_WIDTH-1:0];
            pick_valid = 1'b1;
        end
    end
    sel = locked_reg ? sel_reg : pick;
end

wire active = locked_reg || pick_valid;
wire beat = active && s_axis_tvalid[sel] && m_axis_tready;

always @(posedge clk) begin
    if (beat) begin
        if (s_axis_tlast[sel]) begin
            locked_reg <= 1'b0;
        end else begin
            locked_reg <= 1'b1;
        end
        sel_reg <= sel;
        last_reg <= sel;
    end
    if (rst) begin
        locked_reg <= 1'b0;
        sel_reg <= {SEL_WIDTH{1'b0}};
        last_reg <= PORTS[SEL_WIDTH-1:0] - 1'b1;
    end
end

genvar g;
generate
    for (g = 0; g < PORTS; g = g + 1) begin : g_ready
        assign s_axis_tready[g] = active && (sel == g) && m_axis_tready;
    end
endgenerate

assign m_axis_tdata = s_axis_tdata[sel*DATA_WIDTH +: DATA_WIDTH];
assign m_axis_tkeep = s_axis_tkeep[sel*KEEP_WIDTH +: KEEP_WIDTH];
assign m_axis_tvalid = active && s_axis_tvalid[sel];
assign m_axis_tlast = s_axis_tlast[sel];
assign m_axis_tuser = s_axis_tuser[sel*USER_WIDTH +: USER_WIDTH];

endmodule

`resetall
