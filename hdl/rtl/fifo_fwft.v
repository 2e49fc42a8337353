// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Small synchronous FIFO, first-word fall-through (distributed RAM)
 *
 * s_valid/s_ready in, m_valid/m_ready out; m_data shows the head while
 * m_valid. count is the number of entries held.
 */
module fifo_fwft #
(
    // entry width in bits
    parameter WIDTH = 32,
    // depth (a power of two)
    parameter DEPTH = 16,
    parameter ADDR_WIDTH = clog2(DEPTH)
)
(
    input  wire                 clk,
    input  wire                 rst,

    input  wire [WIDTH-1:0]     s_data,
    input  wire                 s_valid,
    output wire                 s_ready,

    output wire [WIDTH-1:0]     m_data,
    output wire                 m_valid,
    input  wire                 m_ready,

    output wire [ADDR_WIDTH:0]  count
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
    if ((1 << ADDR_WIDTH) != DEPTH || DEPTH < 2) begin : check_depth
        param_error_DEPTH_must_be_a_power_of_two_at_least_2 bad();
    end
endgenerate

reg [WIDTH-1:0] mem [0:DEPTH-1];
reg [ADDR_WIDTH:0] wr_ptr_reg, rd_ptr_reg;

wire [ADDR_WIDTH:0] used = wr_ptr_reg - rd_ptr_reg;
wire full = used[ADDR_WIDTH];
wire empty = (used == {ADDR_WIDTH+1{1'b0}});

always @(posedge clk) begin
    if (s_valid && !full) begin
        mem[wr_ptr_reg[ADDR_WIDTH-1:0]] <= s_data;
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
    end
    if (m_ready && !empty) begin
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
    end
    if (rst) begin
        wr_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
        rd_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
    end
end

assign s_ready = !full;
assign m_data = mem[rd_ptr_reg[ADDR_WIDTH-1:0]];
assign m_valid = !empty;
assign count = used;

endmodule

`resetall
