// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Forwarded-frame rewrite: MAC addresses, IPv4 TTL and checksum, RBCC stamp
 *
 * For each frame, a header (s_hdr_*) says what to do: drop it (the frame is
 * consumed and not sent), or send it to m_axis with tdest = s_hdr_dest and:
 * bytes 0-5 = dst MAC, 6-11 = src MAC, 22 = new TTL, 24-25 = new checksum,
 * and if stamp, the RBCC rate and bottle_node (RBCC header bytes 4-11 at
 * frame offset rbcc_offset) = rate, bottle_node. Everything else passes
 * unchanged.
 *
 * The data path is combinational (tready flows through); a header is taken
 * at the latest with the last beat of the previous frame, so frames pass
 * back to back without a bubble.
 */
module frame_rewrite #
(
    // width of the AXI-Stream data bus in bits
    parameter DATA_WIDTH = 64,
    // tkeep width (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // tuser width
    parameter USER_WIDTH = 1,
    // tdest width
    parameter DEST_WIDTH = 2
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Per-frame header
     */
    input  wire                   s_hdr_valid,
    output wire                   s_hdr_ready,
    input  wire                   s_hdr_drop,
    input  wire [DEST_WIDTH-1:0]  s_hdr_dest,
    input  wire [47:0]            s_hdr_dst_mac,
    input  wire [47:0]            s_hdr_src_mac,
    input  wire [7:0]             s_hdr_ttl,
    input  wire [15:0]            s_hdr_csum,
    input  wire                   s_hdr_stamp,
    input  wire [6:0]             s_hdr_rbcc_offset,
    input  wire [31:0]            s_hdr_rate,
    input  wire [31:0]            s_hdr_bottle_node,

    /*
     * AXI-Stream input
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
    output wire [DEST_WIDTH-1:0]  m_axis_tdest
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

// bytes past the RBCC header's bottle_node are never rewritten
localparam MAX_OFFSET = 98;
localparam BEAT_WIDTH = clog2((MAX_OFFSET + KEEP_WIDTH - 1) / KEEP_WIDTH + 1);

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin : check_keep_width
        param_error_KEEP_WIDTH_must_be_DATA_WIDTH_over_8 bad();
    end
endgenerate

reg active_reg;
reg drop_reg;
reg [DEST_WIDTH-1:0] dest_reg;
reg [47:0] dst_mac_reg, src_mac_reg;
reg [7:0] ttl_reg;
reg [15:0] csum_reg;
reg stamp_reg;
reg [6:0] rbcc_offset_reg;
reg [31:0] rate_reg, bottle_node_reg;
reg [BEAT_WIDTH-1:0] beat_reg;

wire beat = s_axis_tvalid && s_axis_tready;
wire frame_end = beat && s_axis_tlast;
wire hdr_take = s_hdr_valid && s_hdr_ready;

assign s_hdr_ready = !active_reg || frame_end;
assign s_axis_tready = active_reg && (drop_reg || m_axis_tready);

// the rewritten beat
reg [DATA_WIDTH-1:0] data;
integer i;
integer off;
integer rel;

always @* begin
    data = s_axis_tdata;
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        off = {{32-BEAT_WIDTH{1'b0}}, beat_reg} * KEEP_WIDTH + i;
        rel = off - {25'd0, rbcc_offset_reg};
        if (off < 6) begin
            data[i*8 +: 8] = dst_mac_reg[(5-off)*8 +: 8];
        end else if (off < 12) begin
            data[i*8 +: 8] = src_mac_reg[(11-off)*8 +: 8];
        end else if (off == 22) begin
            data[i*8 +: 8] = ttl_reg;
        end else if (off == 24) begin
            data[i*8 +: 8] = csum_reg[15:8];
        end else if (off == 25) begin
            data[i*8 +: 8] = csum_reg[7:0];
        end else if (stamp_reg && rel >= 4 && rel < 8) begin
            data[i*8 +: 8] = rate_reg[(7-rel)*8 +: 8];
        end else if (stamp_reg && rel >= 8 && rel < 12) begin
            data[i*8 +: 8] = bottle_node_reg[(11-rel)*8 +: 8];
        end
    end
end

always @(posedge clk) begin
    if (beat) begin
        if (beat_reg != {BEAT_WIDTH{1'b1}}) begin
            beat_reg <= beat_reg + 1'b1;
        end
    end
    if (frame_end) begin
        active_reg <= 1'b0;
        beat_reg <= {BEAT_WIDTH{1'b0}};
    end
    if (hdr_take) begin
        active_reg <= 1'b1;
        drop_reg <= s_hdr_drop;
        dest_reg <= s_hdr_dest;
        dst_mac_reg <= s_hdr_dst_mac;
        src_mac_reg <= s_hdr_src_mac;
        ttl_reg <= s_hdr_ttl;
        csum_reg <= s_hdr_csum;
        stamp_reg <= s_hdr_stamp;
        rbcc_offset_reg <= s_hdr_rbcc_offset;
        rate_reg <= s_hdr_rate;
        bottle_node_reg <= s_hdr_bottle_node;
    end
    if (rst) begin
        active_reg <= 1'b0;
        beat_reg <= {BEAT_WIDTH{1'b0}};
    end
end

assign m_axis_tdata = data;
assign m_axis_tkeep = s_axis_tkeep;
assign m_axis_tvalid = active_reg && !drop_reg && s_axis_tvalid;
assign m_axis_tlast = s_axis_tlast;
assign m_axis_tuser = s_axis_tuser;
assign m_axis_tdest = dest_reg;

endmodule

`resetall
