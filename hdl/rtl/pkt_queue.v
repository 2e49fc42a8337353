// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Per-port output queue: store-and-forward packet FIFO in block RAM
 *
 * Frames written on s_axis become visible to m_axis only once their last
 * beat is written. The queue length in packets, qlen, is what admission
 * decides on: it counts packets admitted to the queue (admit pulses, given
 * by the admission logic when it accepts a packet, possibly before the
 * packet's beats arrive) that have not started transmission; a packet leaves
 * the count when its first beat is taken on m_axis (m_sop). This is the
 * reference model's q (the packet on the wire is not counted).
 *
 * The RAM holds DEPTH beats; s_axis_tready is low while it is full, so the
 * queue limit times the largest frame (in beats) must fit DEPTH for the
 * packet-count limit to be the only limit.
 */
module pkt_queue #
(
    // width of the AXI-Stream data bus in bits
    parameter DATA_WIDTH = 64,
    // tkeep width (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // tuser width
    parameter USER_WIDTH = 1,
    // RAM depth in beats (a power of two)
    parameter DEPTH = 1024,
    // queue length counter width (packets)
    parameter QLEN_WIDTH = 16
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI-Stream input (admitted frames)
     */
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tvalid,
    output wire                   s_axis_tready,
    input  wire                   s_axis_tlast,
    input  wire [USER_WIDTH-1:0]  s_axis_tuser,

    /*
     * AXI-Stream output
     */
    output wire [DATA_WIDTH-1:0]  m_axis_tdata,
    output wire [KEEP_WIDTH-1:0]  m_axis_tkeep,
    output wire                   m_axis_tvalid,
    input  wire                   m_axis_tready,
    output wire                   m_axis_tlast,
    output wire [USER_WIDTH-1:0]  m_axis_tuser,

    /*
     * Queue length
     */
    input  wire                   admit,
    output wire [QLEN_WIDTH-1:0]  qlen,
    // a packet started transmission this cycle
    output wire                   m_sop,
    // ... and the queue length went to zero with it
    output wire                   went_empty,
    // beats stored
    output wire [clog2(DEPTH):0]  status_beats
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

localparam ADDR_WIDTH = clog2(DEPTH);
localparam WORD_WIDTH = DATA_WIDTH + KEEP_WIDTH + 1 + USER_WIDTH;

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if ((1 << ADDR_WIDTH) != DEPTH || DEPTH < 4) begin : check_depth
        param_error_DEPTH_must_be_a_power_of_two_at_least_4 bad();
    end
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin : check_keep_width
        param_error_KEEP_WIDTH_must_be_DATA_WIDTH_over_8 bad();
    end
endgenerate

reg [WORD_WIDTH-1:0] mem [0:DEPTH-1];

// pointers with one extra bit for full/empty
reg [ADDR_WIDTH:0] wr_ptr_reg;         // next beat to write
reg [ADDR_WIDTH:0] wr_ptr_commit_reg;  // end of the last complete frame
reg [ADDR_WIDTH:0] rd_ptr_reg;         // next beat to read

wire full = (wr_ptr_reg == (rd_ptr_reg ^ {1'b1, {ADDR_WIDTH{1'b0}}}));
wire empty = (wr_ptr_commit_reg == rd_ptr_reg);

wire wr_beat = s_axis_tvalid && !full;

always @(posedge clk) begin
    if (wr_beat) begin
        mem[wr_ptr_reg[ADDR_WIDTH-1:0]] <= {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};
        wr_ptr_reg <= wr_ptr_reg + 1'b1;
        if (s_axis_tlast) begin
            wr_ptr_commit_reg <= wr_ptr_reg + 1'b1;
        end
    end
    if (rst) begin
        wr_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
        wr_ptr_commit_reg <= {ADDR_WIDTH+1{1'b0}};
    end
end

// read side: RAM output register, then the output register
reg [WORD_WIDTH-1:0] rd_data_reg;
reg rd_valid_reg, rd_valid_next;
reg [WORD_WIDTH-1:0] out_reg;
reg out_valid_reg, out_valid_next;
reg out_first_reg;  // the output beat is the first of its frame

wire out_ready = !out_valid_reg || m_axis_tready;
wire rd_en = !empty && (!rd_valid_reg || out_ready);
wire out_take = out_valid_reg && m_axis_tready;

always @* begin
    rd_valid_next = rd_valid_reg;
    out_valid_next = out_valid_reg;
    if (out_ready) begin
        out_valid_next = rd_valid_reg;
        rd_valid_next = 1'b0;
    end
    if (rd_en) begin
        rd_valid_next = 1'b1;
    end
end

always @(posedge clk) begin
    rd_valid_reg <= rd_valid_next;
    out_valid_reg <= out_valid_next;
    if (rd_en) begin
        rd_data_reg <= mem[rd_ptr_reg[ADDR_WIDTH-1:0]];
        rd_ptr_reg <= rd_ptr_reg + 1'b1;
    end
    if (out_ready) begin
        out_reg <= rd_data_reg;
    end
    if (out_take) begin
        out_first_reg <= out_reg[DATA_WIDTH+KEEP_WIDTH];
    end
    if (rst) begin
        rd_ptr_reg <= {ADDR_WIDTH+1{1'b0}};
        rd_valid_reg <= 1'b0;
        out_valid_reg <= 1'b0;
        out_first_reg <= 1'b1;
    end
end

// queue length in packets
reg [QLEN_WIDTH-1:0] qlen_reg, qlen_next;
wire sop = out_take && out_first_reg;

always @* begin
    qlen_next = qlen_reg;
    if (admit && !sop) begin
        qlen_next = qlen_reg + 1'b1;
    end else if (!admit && sop) begin
        qlen_next = qlen_reg - 1'b1;
    end
end

always @(posedge clk) begin
    qlen_reg <= qlen_next;
    if (rst) begin
        qlen_reg <= {QLEN_WIDTH{1'b0}};
    end
end

assign s_axis_tready = !full;

assign m_axis_tdata = out_reg[DATA_WIDTH-1:0];
assign m_axis_tkeep = out_reg[DATA_WIDTH +: KEEP_WIDTH];
assign m_axis_tlast = out_reg[DATA_WIDTH+KEEP_WIDTH];
assign m_axis_tuser = out_reg[DATA_WIDTH+KEEP_WIDTH+1 +: USER_WIDTH];
assign m_axis_tvalid = out_valid_reg;

assign qlen = qlen_reg;
assign m_sop = sop;
assign went_empty = sop && !admit && (qlen_reg == {{QLEN_WIDTH-1{1'b0}}, 1'b1});
assign status_beats = wr_ptr_reg - rd_ptr_reg;

endmodule

`resetall
