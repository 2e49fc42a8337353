// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Frame parser tap: Ethernet, IPv4 (options length) and RBCC header fields
 *
 * Watches an AXI-Stream (it never stalls it: tready is an input) and, two
 * cycles after each frame's last beat, pulses m_hdr_valid with the frame's
 * header fields and status. Decisions need the frame length (IPv4 total
 * length must fit in the frame), so the result comes at the end of the frame;
 * the core is store-and-forward.
 *
 * m_status: 0 = IPv4, 1 = not IPv4 (ethertype), 2 = malformed, in the order
 * of the reference model's parse_ipv4: frame < 14 bytes -> malformed;
 * ethertype != 0x0800 -> not IPv4; frame < 34 bytes, version != 4, IHL < 5,
 * header beyond the frame, total length < header length or beyond the frame
 * -> malformed; protocol 253 with fragment offset 0 and total length shorter
 * than header + 24 bytes -> malformed. m_rbcc_valid: IPv4, protocol 253,
 * fragment offset 0, RBCC version 1.
 *
 * Multi-byte fields are big-endian values; flat byte vectors (m_ip_hdr) hold
 * byte i at bits [8*i+7:8*i] like AXI-Stream lanes.
 */
module router_parser #
(
    // width of the AXI-Stream data bus in bits (64, 128 or 256)
    parameter DATA_WIDTH = 64,
    // tkeep width (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // tuser width; bit 0 marks a bad frame (sampled on the last beat)
    parameter USER_WIDTH = 1
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Monitored AXI-Stream
     */
    input  wire [DATA_WIDTH-1:0]  s_axis_tdata,
    input  wire [KEEP_WIDTH-1:0]  s_axis_tkeep,
    input  wire                   s_axis_tvalid,
    input  wire                   s_axis_tready,
    input  wire                   s_axis_tlast,
    input  wire [USER_WIDTH-1:0]  s_axis_tuser,

    /*
     * Header output (one pulse per frame)
     */
    output wire                   m_hdr_valid,
    output wire [15:0]            m_frame_len,
    output wire                   m_frame_error,
    output wire [1:0]             m_status,
    output wire [47:0]            m_eth_dst,
    output wire [47:0]            m_eth_src,
    output wire [15:0]            m_eth_type,
    output wire [3:0]             m_ip_ihl,
    output wire [15:0]            m_ip_total_len,
    output wire [7:0]             m_ip_ttl,
    output wire [7:0]             m_ip_proto,
    output wire [15:0]            m_ip_csum,
    output wire [31:0]            m_ip_src,
    output wire [31:0]            m_ip_dst,
    output wire [479:0]           m_ip_hdr,
    output wire                   m_rbcc_valid,
    output wire [6:0]             m_rbcc_offset,
    output wire [3:0]             m_rbcc_flags,
    output wire [7:0]             m_rbcc_next_proto,
    output wire [31:0]            m_rbcc_rate,
    output wire [31:0]            m_rbcc_bottle_node,
    output wire [31:0]            m_rbcc_return_rate,
    output wire [31:0]            m_rbcc_return_bottle_node,
    output wire [31:0]            m_rbcc_current_rate
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

// bytes kept from the start of a frame: Ethernet 14 + IPv4 up to 60 + RBCC 24
localparam HDR_BYTES = 98;
localparam HDR_BEATS = (HDR_BYTES + KEEP_WIDTH - 1) / KEEP_WIDTH;
localparam BEAT_CNT_WIDTH = clog2(HDR_BEATS + 1);
localparam KEEP_CNT_WIDTH = clog2(KEEP_WIDTH + 1);

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (DATA_WIDTH != 64 && DATA_WIDTH != 128 && DATA_WIDTH != 256) begin : check_data_width
        param_error_DATA_WIDTH_must_be_64_128_or_256 bad();
    end
    if (KEEP_WIDTH * 8 != DATA_WIDTH) begin : check_keep_width
        param_error_KEEP_WIDTH_must_be_DATA_WIDTH_over_8 bad();
    end
endgenerate

// capture of the current frame's first bytes
reg [HDR_BYTES*8-1:0] buf_reg, buf_next;
reg [BEAT_CNT_WIDTH-1:0] beat_cnt_reg, beat_cnt_next;
reg [15:0] len_reg, len_next;

// snapshot of a finished frame
reg [HDR_BYTES*8-1:0] snap_buf_reg;
reg [15:0] snap_len_reg;
reg snap_err_reg;
reg snap_valid_reg;

reg [KEEP_CNT_WIDTH-1:0] keep_cnt;
reg [15:0] len_sum;

wire beat = s_axis_tvalid && s_axis_tready;

integer i, b;

always @* begin
    keep_cnt = {KEEP_CNT_WIDTH{1'b0}};
    for (i = 0; i < KEEP_WIDTH; i = i + 1) begin
        keep_cnt = keep_cnt + {{KEEP_CNT_WIDTH-1{1'b0}}, s_axis_tkeep[i]};
    end

    // the buffer with the current beat merged in
    buf_next = buf_reg;
    for (b = 0; b < HDR_BEATS; b = b + 1) begin
        for (i = 0; i < KEEP_WIDTH && b*KEEP_WIDTH + i < HDR_BYTES; i = i + 1) begin
            if (beat &&
                    {{32-BEAT_CNT_WIDTH{1'b0}}, beat_cnt_reg} == b) begin
                buf_next[(b*KEEP_WIDTH+i)*8 +: 8] = s_axis_tdata[i*8 +: 8];
            end
        end
    end

    // saturating byte count (frames over 64 KiB read as 65535)
    len_sum = len_reg + (s_axis_tlast ? {{16-KEEP_CNT_WIDTH{1'b0}}, keep_cnt} : KEEP_WIDTH[15:0]);
    if (len_sum < len_reg) begin
        len_sum = 16'hffff;
    end

    beat_cnt_next = beat_cnt_reg;
    len_next = len_reg;
    if (beat) begin
        if (s_axis_tlast) begin
            beat_cnt_next = {BEAT_CNT_WIDTH{1'b0}};
            len_next = 16'd0;
        end else begin
            if (beat_cnt_reg != HDR_BEATS[BEAT_CNT_WIDTH-1:0]) begin
                beat_cnt_next = beat_cnt_reg + 1'b1;
            end
            len_next = len_sum;
        end
    end
end

always @(posedge clk) begin
    buf_reg <= buf_next;
    beat_cnt_reg <= beat_cnt_next;
    len_reg <= len_next;

    snap_valid_reg <= beat && s_axis_tlast;
    if (beat && s_axis_tlast) begin
        snap_buf_reg <= buf_next;
        snap_len_reg <= len_sum;
        snap_err_reg <= s_axis_tuser[0];
    end

    if (rst) begin
        beat_cnt_reg <= {BEAT_CNT_WIDTH{1'b0}};
        len_reg <= 16'd0;
        snap_valid_reg <= 1'b0;
    end
end

/*
 * Stage 2: fields and checks from the snapshot
 */
function [7:0] sb(input integer idx);
    sb = snap_buf_reg[idx*8 +: 8];
endfunction

wire [15:0] eth_type = {sb(12), sb(13)};
wire [7:0] ip_byte0 = sb(14);
wire [3:0] ip_version = ip_byte0[7:4];
wire [3:0] ip_ihl = ip_byte0[3:0];
wire [15:0] ip_total_len = {sb(16), sb(17)};
wire [12:0] ip_frag_off = {snap_buf_reg[20*8 +: 5], sb(21)};
wire [7:0] ip_proto = sb(23);
wire [15:0] hdr_len = {10'd0, ip_ihl, 2'b00};
wire [15:0] ip_len_avail = snap_len_reg - 16'd14;

reg [191:0] rbcc_win;
integer k;

always @* begin
    rbcc_win = 192'd0;
    for (k = 5; k < 16; k = k + 1) begin
        if ({28'd0, ip_ihl} == k) begin
            rbcc_win = snap_buf_reg[(14+4*k)*8 +: 192];
        end
    end
end

function [31:0] be32(input integer off);
    be32 = {rbcc_win[off*8 +: 8], rbcc_win[(off+1)*8 +: 8], rbcc_win[(off+2)*8 +: 8], rbcc_win[(off+3)*8 +: 8]};
endfunction

reg [1:0] status;
reg rbcc_valid;

always @* begin
    status = 2'd0;
    rbcc_valid = 1'b0;
    if (snap_len_reg < 16'd14) begin
        status = 2'd2;
    end else if (eth_type != 16'h0800) begin
        status = 2'd1;
    end else if (snap_len_reg < 16'd34 || ip_version != 4'd4 || ip_ihl < 4'd5 ||
            ip_len_avail < hdr_len) begin
        status = 2'd2;
    end else if (ip_total_len < hdr_len || ip_total_len > ip_len_avail) begin
        status = 2'd2;
    end else if (ip_proto == 8'd253 && ip_frag_off == 13'd0) begin
        if (ip_total_len < hdr_len + 16'd24) begin
            status = 2'd2;
        end else begin
            rbcc_valid = (rbcc_win[7:4] == 4'd1);
        end
    end
end

reg hdr_valid_reg;
reg [15:0] frame_len_reg;
reg frame_error_reg;
reg [1:0] status_reg;
reg [47:0] eth_dst_reg, eth_src_reg;
reg [15:0] eth_type_reg;
reg [3:0] ip_ihl_reg;
reg [15:0] ip_total_len_reg;
reg [7:0] ip_ttl_reg, ip_proto_reg;
reg [15:0] ip_csum_reg;
reg [31:0] ip_src_reg, ip_dst_reg;
reg [479:0] ip_hdr_reg;
reg rbcc_valid_reg;
reg [6:0] rbcc_offset_reg;
reg [3:0] rbcc_flags_reg;
reg [7:0] rbcc_next_proto_reg;
reg [31:0] rbcc_rate_reg, rbcc_bottle_node_reg, rbcc_return_rate_reg;
reg [31:0] rbcc_return_bottle_node_reg, rbcc_current_rate_reg;

always @(posedge clk) begin
    hdr_valid_reg <= snap_valid_reg;
    if (snap_valid_reg) begin
        frame_len_reg <= snap_len_reg;
        frame_error_reg <= snap_err_reg;
        status_reg <= status;
        eth_dst_reg <= {sb(0), sb(1), sb(2), sb(3), sb(4), sb(5)};
        eth_src_reg <= {sb(6), sb(7), sb(8), sb(9), sb(10), sb(11)};
        eth_type_reg <= eth_type;
        ip_ihl_reg <= ip_ihl;
        ip_total_len_reg <= ip_total_len;
        ip_ttl_reg <= sb(22);
        ip_proto_reg <= ip_proto;
        ip_csum_reg <= {sb(24), sb(25)};
        ip_src_reg <= {sb(26), sb(27), sb(28), sb(29)};
        ip_dst_reg <= {sb(30), sb(31), sb(32), sb(33)};
        ip_hdr_reg <= snap_buf_reg[14*8 +: 480];
        rbcc_valid_reg <= rbcc_valid;
        rbcc_offset_reg <= 7'd14 + {1'b0, ip_ihl, 2'b00};
        rbcc_flags_reg <= rbcc_win[3:0];
        rbcc_next_proto_reg <= rbcc_win[15:8];
        rbcc_rate_reg <= be32(4);
        rbcc_bottle_node_reg <= be32(8);
        rbcc_return_rate_reg <= be32(12);
        rbcc_return_bottle_node_reg <= be32(16);
        rbcc_current_rate_reg <= be32(20);
    end
    if (rst) begin
        hdr_valid_reg <= 1'b0;
    end
end

assign m_hdr_valid = hdr_valid_reg;
assign m_frame_len = frame_len_reg;
assign m_frame_error = frame_error_reg;
assign m_status = status_reg;
assign m_eth_dst = eth_dst_reg;
assign m_eth_src = eth_src_reg;
assign m_eth_type = eth_type_reg;
assign m_ip_ihl = ip_ihl_reg;
assign m_ip_total_len = ip_total_len_reg;
assign m_ip_ttl = ip_ttl_reg;
assign m_ip_proto = ip_proto_reg;
assign m_ip_csum = ip_csum_reg;
assign m_ip_src = ip_src_reg;
assign m_ip_dst = ip_dst_reg;
assign m_ip_hdr = ip_hdr_reg;
assign m_rbcc_valid = rbcc_valid_reg;
assign m_rbcc_offset = rbcc_offset_reg;
assign m_rbcc_flags = rbcc_flags_reg;
assign m_rbcc_next_proto = rbcc_next_proto_reg;
assign m_rbcc_rate = rbcc_rate_reg;
assign m_rbcc_bottle_node = rbcc_bottle_node_reg;
assign m_rbcc_return_rate = rbcc_return_rate_reg;
assign m_rbcc_return_bottle_node = rbcc_return_bottle_node_reg;
assign m_rbcc_current_rate = rbcc_current_rate_reg;

endmodule

`resetall
