// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Admission and drain schedule of one egress port
 *
 * Implements the reference model's queue model (docs/ROUTER_MODEL.md "Queue
 * model") around a red_admit unit: a packet admitted at now starts
 * transmission at t_deq = max(now, next_free), and the port is then busy for
 * ceil(len * 8 * 10^6 / rate_bps) us (rate_bps = 0: unlimited). The queue
 * length an arrival sees, q, counts admitted packets with t_deq > now; they
 * are kept in a FIFO of t_deq values (PEND_DEPTH deep) that drains as time
 * passes. idle_since is the t_deq of the packet that left the queue empty.
 *
 * Each packet that reaches its t_deq gives one release pulse: the egress
 * queue lets one frame onto the wire per release (the shaper).
 *
 * A request is taken once the pending FIFO has caught up with now. The
 * service-time division (radix-2, 40 cycles) runs after each admission on a
 * rate-limited port; the next request to this port waits for it. On an
 * unlimited port a request is taken every 6 cycles (red_admit), each
 * answered 6 cycles after it was taken.
 */
module egress_admit #
(
    // entries of the RED idle-decay table
    parameter DECAY_LEN = 256,
    // queue length width (packets)
    parameter QLEN_WIDTH = 16,
    // pending-packet FIFO depth (a power of two); queue limits above it act as it
    parameter PEND_DEPTH = 256,
    // width of the tag that travels with a request
    parameter TAG_WIDTH = 1,
    parameter DECAY_ADDR_WIDTH = clog2(DECAY_LEN)
)
(
    input  wire                         clk,
    input  wire                         rst,

    // current time in microseconds
    input  wire [47:0]                  now_us,

    /*
     * Configuration
     */
    input  wire [39:0]                  cfg_rate_bps,
    input  wire                         cfg_red_enable,
    input  wire [16:0]                  cfg_wq16,
    input  wire [31:0]                  cfg_th_min16,
    input  wire [31:0]                  cfg_th_max16,
    input  wire [32:0]                  cfg_slope,
    input  wire [32:0]                  cfg_s_recip,
    input  wire [QLEN_WIDTH-1:0]        cfg_queue_limit,
    input  wire                         cfg_load,
    input  wire [31:0]                  cfg_seed,
    input  wire [DECAY_ADDR_WIDTH:0]    cfg_decay_used,
    input  wire                         decay_wr_en,
    input  wire [DECAY_ADDR_WIDTH-1:0]  decay_wr_addr,
    input  wire [16:0]                  decay_wr_data,

    /*
     * Request: a packet of s_len bytes for this port
     */
    input  wire                         s_valid,
    output wire                         s_ready,
    input  wire [15:0]                  s_len,
    input  wire [TAG_WIDTH-1:0]         s_tag,

    /*
     * Decision (m_cause as red_admit), with the q and avg it saw
     */
    output wire                         m_valid,
    output wire                         m_drop,
    output wire [1:0]                   m_cause,
    output wire [QLEN_WIDTH-1:0]        m_qlen,
    output wire [31:0]                  m_avg,
    output wire [TAG_WIDTH-1:0]         m_tag,

    // one packet may start transmission
    output wire                         release_pkt,

    /*
     * State, for the register map
     */
    output wire [QLEN_WIDTH-1:0]        stat_qlen,
    output wire [31:0]                  stat_avg,
    output wire [31:0]                  stat_count,
    output wire [31:0]                  stat_rng
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

localparam PEND_ADDR_WIDTH = clog2(PEND_DEPTH);

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if ((1 << PEND_ADDR_WIDTH) != PEND_DEPTH || PEND_DEPTH < 2) begin : check_pend_depth
        param_error_PEND_DEPTH_must_be_a_power_of_two_at_least_2 bad();
    end
    if (PEND_ADDR_WIDTH + 1 > QLEN_WIDTH) begin : check_qlen_width
        param_error_QLEN_WIDTH_must_hold_PEND_DEPTH bad();
    end
endgenerate

/*
 * Pending packets: t_deq values in admission order
 */
reg [47:0] pend_mem [0:PEND_DEPTH-1];
reg [PEND_ADDR_WIDTH:0] pend_wr_ptr_reg, pend_rd_ptr_reg;
wire [PEND_ADDR_WIDTH:0] pend_count = pend_wr_ptr_reg - pend_rd_ptr_reg;
wire pend_empty = (pend_count == {PEND_ADDR_WIDTH+1{1'b0}});
wire [47:0] pend_head = pend_mem[pend_rd_ptr_reg[PEND_ADDR_WIDTH-1:0]];
wire pend_pop = !pend_empty && (pend_head <= now_us);
// caught up with now: no pending packet has reached its t_deq
wire settled = !pend_pop;

reg [47:0] next_free_reg, next_free_next;
reg [47:0] idle_since_reg, idle_since_next;
reg pend_push;
reg [47:0] pend_push_val;
reg release_now;

// queue length as the model counts it (with this cycle's admission; a
// request is only taken when nothing pops)
wire [PEND_ADDR_WIDTH:0] pend_count_next = pend_count + {{PEND_ADDR_WIDTH{1'b0}}, pend_push};
wire [QLEN_WIDTH-1:0] qlen = {{QLEN_WIDTH-PEND_ADDR_WIDTH-1{1'b0}}, pend_count_next};

/*
 * Service-time divider: ceil(len * 8e6 / rate), 40-bit radix-2
 */
reg div_busy_reg;
reg [5:0] div_cnt_reg;
reg [39:0] div_num_reg;   // dividend, shifted out MSB first
reg [38:0] div_quo_reg;  // the top quotient bit is only ever in div_quo_new
reg [39:0] div_rem_reg;  // < divisor
reg [39:0] div_den_reg;
reg [47:0] div_base_reg;  // t_deq the service time is added to

wire [40:0] div_rem_shift = {div_rem_reg, div_num_reg[39]};
wire div_ge = div_rem_shift >= {1'b0, div_den_reg};
wire [40:0] div_rem_new = div_ge ? div_rem_shift - {1'b0, div_den_reg} : div_rem_shift;
wire [39:0] div_quo_new = {div_quo_reg, div_ge};

/*
 * RED / FIFO decision
 */
wire red_s_ready;
wire red_m_valid, red_m_drop;
wire [1:0] red_m_cause;
wire [31:0] red_m_avg;
wire [QLEN_WIDTH-1:0] red_m_qlen;
wire [TAG_WIDTH+16-1:0] red_m_tag;

// the state as this cycle leaves it, so that a request taken in the cycle of
// the previous decision sees that decision's effect (the next one
// follows at once on an unlimited port)
wire [47:0] idle_us48 = now_us - idle_since_next;
wire [31:0] idle_us = (idle_us48[47:32] != 16'd0) ? 32'hffffffff : idle_us48[31:0];

// the pending FIFO bounds the queue: a queue limit above PEND_DEPTH acts as it
wire [QLEN_WIDTH-1:0] pend_depth_q = PEND_DEPTH[QLEN_WIDTH-1:0];
wire [QLEN_WIDTH-1:0] queue_limit = (cfg_queue_limit > pend_depth_q) ? pend_depth_q : cfg_queue_limit;

wire accept = s_valid && s_ready;
wire div_start;

// red_admit takes one request at a time; on a rate-limited port the next one
// also waits for the service-time division
assign s_ready = red_s_ready && !div_busy_reg && !div_start && settled;

red_admit #(
    .DECAY_LEN(DECAY_LEN),
    .QLEN_WIDTH(QLEN_WIDTH),
    .TAG_WIDTH(TAG_WIDTH+16)
)
red_admit_inst (
    .clk(clk),
    .rst(rst),
    .cfg_red_enable(cfg_red_enable),
    .cfg_wq16(cfg_wq16),
    .cfg_th_min16(cfg_th_min16),
    .cfg_th_max16(cfg_th_max16),
    .cfg_slope(cfg_slope),
    .cfg_s_recip(cfg_s_recip),
    .cfg_queue_limit(queue_limit),
    .cfg_load(cfg_load),
    .cfg_seed(cfg_seed),
    .cfg_decay_used(cfg_decay_used),
    .decay_wr_en(decay_wr_en),
    .decay_wr_addr(decay_wr_addr),
    .decay_wr_data(decay_wr_data),
    .s_valid(accept),
    .s_ready(red_s_ready),
    .s_qlen(qlen),
    .s_idle_us(idle_us),
    .s_tag({s_len, s_tag}),
    .m_valid(red_m_valid),
    .m_drop(red_m_drop),
    .m_cause(red_m_cause),
    .m_avg(red_m_avg),
    .m_qlen(red_m_qlen),
    .m_tag(red_m_tag),
    .stat_avg(stat_avg),
    .stat_count(stat_count),
    .stat_rng(stat_rng)
);

wire [15:0] dec_len = red_m_tag[TAG_WIDTH +: 16];
wire [47:0] t_deq = (next_free_reg > now_us) ? next_free_reg : now_us;
wire admitted = red_m_valid && !red_m_drop;
assign div_start = admitted && cfg_rate_bps != 40'd0;

always @* begin
    next_free_next = next_free_reg;
    idle_since_next = idle_since_reg;
    pend_push = 1'b0;
    pend_push_val = t_deq;
    release_now = 1'b0;

    if (pend_pop && pend_count == {{PEND_ADDR_WIDTH{1'b0}}, 1'b1}) begin
        // the last pending packet starts: the queue is empty from its t_deq
        idle_since_next = pend_head;
    end

    if (admitted) begin
        next_free_next = t_deq;
        if (t_deq > now_us) begin
            pend_push = 1'b1;
        end else begin
            // dequeued on arrival: the queue is empty at once
            idle_since_next = t_deq;
            release_now = 1'b1;
        end
    end

    if (div_busy_reg && div_cnt_reg == 6'd0) begin
        // ceil: add one if there is a remainder
        next_free_next = div_base_reg + {8'd0, div_quo_new} +
            {47'd0, (div_rem_new != 41'd0)};
    end
end

always @(posedge clk) begin
    next_free_reg <= next_free_next;
    idle_since_reg <= idle_since_next;

    if (pend_push) begin
        pend_mem[pend_wr_ptr_reg[PEND_ADDR_WIDTH-1:0]] <= pend_push_val;
        pend_wr_ptr_reg <= pend_wr_ptr_reg + 1'b1;
    end
    if (pend_pop) begin
        pend_rd_ptr_reg <= pend_rd_ptr_reg + 1'b1;
    end

    if (div_busy_reg) begin
        div_cnt_reg <= div_cnt_reg - 1'b1;
        div_num_reg <= {div_num_reg[38:0], 1'b0};
        div_rem_reg <= div_rem_new[39:0];
        div_quo_reg <= div_quo_new[38:0];
        if (div_cnt_reg == 6'd0) begin
            div_busy_reg <= 1'b0;
        end
    end else if (div_start) begin
        div_busy_reg <= 1'b1;
        div_cnt_reg <= 6'd39;
        // len * 8e6 < 2^39
        div_num_reg <= {24'd0, dec_len} * 40'd8000000;
        div_quo_reg <= 39'd0;
        div_rem_reg <= 40'd0;
        div_den_reg <= cfg_rate_bps;
        div_base_reg <= t_deq;
    end

    if (rst) begin
        next_free_reg <= 48'd0;
        idle_since_reg <= 48'd0;
        pend_wr_ptr_reg <= {PEND_ADDR_WIDTH+1{1'b0}};
        pend_rd_ptr_reg <= {PEND_ADDR_WIDTH+1{1'b0}};
        div_busy_reg <= 1'b0;
    end
end

assign m_valid = red_m_valid;
assign m_drop = red_m_drop;
assign m_cause = red_m_cause;
assign m_qlen = red_m_qlen;
assign m_avg = red_m_avg;
assign m_tag = red_m_tag[TAG_WIDTH-1:0];
assign release_pkt = pend_pop || release_now;
assign stat_qlen = {{QLEN_WIDTH-PEND_ADDR_WIDTH-1{1'b0}}, pend_count};

endmodule

`resetall
