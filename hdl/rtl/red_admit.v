// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Queue admission of one egress port: FIFO (queue limit only) or RED
 *
 * Bit-exact with the reference model (ratelab_model.red, docs/ROUTER_MODEL.md):
 * avg is Q16.16 packets; on an arrival that finds q > 0 the target q<<16 is
 * approached by ((target-avg)*wq16)>>16; on an arrival to an empty queue
 * m = (idle_us * s_recip) >> 32 and avg = (avg * decay[min(m, DECAY_LEN-1)]) >> 16.
 * Then avg < th_min16 admits (count = -1), avg >= th_max16 drops (forced,
 * count = 0), else count += 1, pb16 = ((avg-th_min16)*slope) >> 32,
 * c = count*pb16, c >= 65536 drops (early) without a draw, else the xorshift32
 * state advances and R*(65536-c) < pb16<<32 drops (early); count = 0 on a drop.
 * After RED admits (or in FIFO mode), q >= queue_limit drops (queue full).
 *
 * One request at a time: s_ready is low while a decision is under way; a
 * decision takes 6 cycles on RED and FIFO ports alike (request accepted at
 * cycle 0, m_valid at cycle 6, the next request accepted in that cycle), so
 * one port admits a packet every 6 cycles, with a fixed latency the core's
 * pipeline relies on. Every multiply has a cycle of its own.
 *
 * m_cause: 0 = admit, 1 = queue full, 2 = RED early drop, 3 = RED forced drop.
 */
module red_admit #
(
    // entries of the idle-decay table (the model's decay_len)
    parameter DECAY_LEN = 256,
    // queue length width (packets); q<<16 must fit 32 bits
    parameter QLEN_WIDTH = 16,
    // width of the tag that travels with a request
    parameter TAG_WIDTH = 1,
    parameter DECAY_ADDR_WIDTH = clog2(DECAY_LEN)
)
(
    input  wire                         clk,
    input  wire                         rst,

    /*
     * Configuration (control plane registers)
     */
    input  wire                         cfg_red_enable,
    input  wire [16:0]                  cfg_wq16,
    input  wire [31:0]                  cfg_th_min16,
    input  wire [31:0]                  cfg_th_max16,
    // floor(max_p * 2^32 / (th_max - th_min)): 33 bits (2^32 with max_p = 1)
    input  wire [32:0]                  cfg_slope,
    // floor(2^32 / s_us): 33 bits, 2^32 when s = 1 us
    input  wire [32:0]                  cfg_s_recip,
    input  wire [QLEN_WIDTH-1:0]        cfg_queue_limit,
    // load the RNG with cfg_seed and reset avg = 0, count = -1
    input  wire                         cfg_load,
    input  wire [31:0]                  cfg_seed,
    // decay table: entries at or past cfg_decay_used read as 0 (the table
    // is non-increasing, so only its nonzero prefix needs writing)
    input  wire [DECAY_ADDR_WIDTH:0]    cfg_decay_used,
    input  wire                         decay_wr_en,
    input  wire [DECAY_ADDR_WIDTH-1:0]  decay_wr_addr,
    input  wire [16:0]                  decay_wr_data,

    /*
     * Request: queue length seen by the arrival, and how long the queue has
     * been empty (now - idle_since in us, saturated to 32 bits; used if q == 0)
     */
    input  wire                         s_valid,
    output wire                         s_ready,
    input  wire [QLEN_WIDTH-1:0]        s_qlen,
    input  wire [31:0]                  s_idle_us,
    input  wire [TAG_WIDTH-1:0]         s_tag,

    /*
     * Decision
     */
    output wire                         m_valid,
    output wire                         m_drop,
    output wire [1:0]                   m_cause,
    output wire [31:0]                  m_avg,
    output wire [QLEN_WIDTH-1:0]        m_qlen,
    output wire [TAG_WIDTH-1:0]         m_tag,

    /*
     * State, for the register map
     */
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

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (QLEN_WIDTH < 1 || QLEN_WIDTH > 16) begin : check_qlen_width
        param_error_QLEN_WIDTH_must_be_1_to_16 bad();
    end
    if (DECAY_LEN < 2 || (1 << DECAY_ADDR_WIDTH) < DECAY_LEN) begin : check_decay_len
        param_error_DECAY_LEN_must_be_at_least_2_and_fit_DECAY_ADDR_WIDTH bad();
    end
endgenerate

localparam [2:0]
    STATE_IDLE = 3'd0,
    STATE_DECAY = 3'd1,
    STATE_AVG = 3'd2,
    STATE_PB = 3'd3,
    STATE_C = 3'd4,
    STATE_DRAW = 3'd5;

localparam [1:0]
    CAUSE_ADMIT = 2'd0,
    CAUSE_QUEUE_FULL = 2'd1,
    CAUSE_RED_EARLY = 2'd2,
    CAUSE_RED_FORCED = 2'd3;

reg [2:0] state_reg, state_next;

// per-port RED registers
reg [31:0] avg_reg, avg_next;
reg [31:0] count_reg, count_next;
reg [31:0] rng_reg, rng_next;

// the request in progress
reg [QLEN_WIDTH-1:0] qlen_reg;
reg [TAG_WIDTH-1:0] tag_reg;
reg [31:0] m_idx_reg, m_idx_next;
reg [31:0] pb16_reg, pb16_next;
reg [63:0] c_reg, c_next;
reg [1:0] region_reg, region_next;  // 0 below th_min, 1 between, 2 at/above th_max, 3 FIFO
reg decay_zero_reg, decay_zero_next;

// decay table (block RAM, registered read)
reg [16:0] decay_mem [0:DECAY_LEN-1];
reg [16:0] decay_rd_reg;
reg [DECAY_ADDR_WIDTH-1:0] decay_rd_addr;

always @(posedge clk) begin
    if (decay_wr_en) begin
        decay_mem[decay_wr_addr] <= decay_wr_data;
    end
    decay_rd_reg <= decay_mem[decay_rd_addr];
end

// output registers
reg m_valid_reg, m_valid_next;
reg m_drop_reg, m_drop_next;
reg [1:0] m_cause_reg, m_cause_next;

// arithmetic
// Waiver: the fixed-point products are shifted right by definition (>> 16,
// >> 32), so their low bits are unused; bit 48 of the 32x17 products is zero
// for every table value the control plane may install (<= 65536), and
// pb16 < 2^16 for every installed slope, so bit 64 of pb_prod is zero.
/* verilator lint_off UNUSEDSIGNAL */
reg [64:0] m_prod;
reg [48:0] step_prod;
reg [48:0] decay_prod;
reg [64:0] pb_prod;
/* verilator lint_on UNUSEDSIGNAL */
reg [31:0] target;
reg [31:0] diff;
reg [31:0] count_inc;
reg [31:0] rng_step, t0, t1;
reg [16:0] one_minus_c;
reg [48:0] draw_lhs;
reg [63:0] draw_rhs;
reg red_drop;
reg queue_full;

always @* begin
    state_next = state_reg;
    avg_next = avg_reg;
    count_next = count_reg;
    rng_next = rng_reg;
    m_idx_next = m_idx_reg;
    pb16_next = pb16_reg;
    c_next = c_reg;
    region_next = region_reg;
    decay_zero_next = decay_zero_reg;
    m_valid_next = 1'b0;
    m_drop_next = m_drop_reg;
    m_cause_next = m_cause_reg;

    // idle decay index (from the request, cycle 0)
    m_prod = {33'd0, s_idle_us} * {32'd0, cfg_s_recip};
    decay_rd_addr = (m_idx_reg >= DECAY_LEN - 1) ? DECAY_LEN[DECAY_ADDR_WIDTH-1:0] - 1'b1 :
        m_idx_reg[DECAY_ADDR_WIDTH-1:0];

    // avg update
    target = {{16-QLEN_WIDTH{1'b0}}, qlen_reg, 16'd0};
    diff = (target >= avg_reg) ? target - avg_reg : avg_reg - target;
    step_prod = {17'd0, diff} * {32'd0, cfg_wq16};
    decay_prod = {17'd0, avg_reg} * {32'd0, decay_zero_reg ? 17'd0 : decay_rd_reg};

    // drop probability (on the updated avg)
    pb_prod = {33'd0, avg_reg - cfg_th_min16} * {32'd0, cfg_slope};
    count_inc = count_reg + 32'd1;

    // draw
    t0 = rng_reg ^ (rng_reg << 13);
    t1 = t0 ^ (t0 >> 17);
    rng_step = t1 ^ (t1 << 5);
    one_minus_c = 17'h10000 - c_reg[16:0];
    draw_lhs = {17'd0, rng_step} * {32'd0, one_minus_c};
    draw_rhs = {pb16_reg, 32'd0};

    queue_full = (qlen_reg >= cfg_queue_limit);
    red_drop = 1'b0;

    case (state_reg)
        STATE_IDLE: begin
            if (s_valid) begin
                // m >= 2^32 (only with s_recip = 2^32) is clamped by the table anyway
                m_idx_next = m_prod[64] ? 32'hffffffff : m_prod[63:32];
                state_next = STATE_DECAY;
            end
        end
        STATE_DECAY: begin
            // decay_rd_addr is presented to the table this cycle
            decay_zero_next = ({1'b0, decay_rd_addr} >= cfg_decay_used);
            state_next = STATE_AVG;
        end
        STATE_AVG: begin
            // FIFO ports keep avg (the model never updates it)
            if (cfg_red_enable) begin
                if (qlen_reg != {QLEN_WIDTH{1'b0}}) begin
                    if (target >= avg_reg) begin
                        avg_next = avg_reg + step_prod[47:16];
                    end else begin
                        avg_next = avg_reg - step_prod[47:16];
                    end
                end else begin
                    avg_next = decay_prod[47:16];
                end
            end
            state_next = STATE_PB;
        end
        STATE_PB: begin
            pb16_next = pb_prod[63:32];
            if (!cfg_red_enable) begin
                // FIFO: the queue limit only, count untouched
                region_next = 2'd3;
            end else if (avg_reg < cfg_th_min16) begin
                region_next = 2'd0;
                count_next = 32'hffffffff;
            end else if (avg_reg >= cfg_th_max16) begin
                region_next = 2'd2;
                count_next = 32'd0;
            end else begin
                region_next = 2'd1;
                count_next = count_inc;
            end
            state_next = STATE_C;
        end
        STATE_C: begin
            c_next = count_reg * pb16_reg;
            state_next = STATE_DRAW;
        end
        STATE_DRAW: begin
            // regions: 0 below th_min, 1 between, 2 at/above th_max, 3 FIFO port
            m_valid_next = 1'b1;
            m_cause_next = CAUSE_ADMIT;
            if (region_reg == 2'd2) begin
                red_drop = 1'b1;
                m_cause_next = CAUSE_RED_FORCED;
            end else if (region_reg == 2'd1) begin
                if (c_reg >= 64'h10000) begin
                    red_drop = 1'b1;
                end else begin
                    rng_next = rng_step;
                    red_drop = ({15'd0, draw_lhs} < draw_rhs);
                end
                if (red_drop) begin
                    count_next = 32'd0;
                    m_cause_next = CAUSE_RED_EARLY;
                end
            end
            if (!red_drop && queue_full) begin
                m_cause_next = CAUSE_QUEUE_FULL;
            end
            m_drop_next = red_drop || queue_full;
            state_next = STATE_IDLE;
        end
        default: begin
            state_next = STATE_IDLE;
        end
    endcase

    if (cfg_load) begin
        avg_next = 32'd0;
        count_next = 32'hffffffff;
        rng_next = cfg_seed;
    end
end

always @(posedge clk) begin
    state_reg <= state_next;
    avg_reg <= avg_next;
    count_reg <= count_next;
    rng_reg <= rng_next;
    m_idx_reg <= m_idx_next;
    pb16_reg <= pb16_next;
    c_reg <= c_next;
    region_reg <= region_next;
    decay_zero_reg <= decay_zero_next;
    m_valid_reg <= m_valid_next;
    m_drop_reg <= m_drop_next;
    m_cause_reg <= m_cause_next;

    if (state_reg == STATE_IDLE && s_valid) begin
        qlen_reg <= s_qlen;
        tag_reg <= s_tag;
    end

    if (rst) begin
        state_reg <= STATE_IDLE;
        avg_reg <= 32'd0;
        count_reg <= 32'hffffffff;
        rng_reg <= 32'd1;
        m_valid_reg <= 1'b0;
    end
end

assign s_ready = (state_reg == STATE_IDLE);
assign m_valid = m_valid_reg;
assign m_drop = m_drop_reg;
assign m_cause = m_cause_reg;
assign m_avg = avg_reg;
assign m_qlen = qlen_reg;
assign m_tag = tag_reg;
assign stat_avg = avg_reg;
assign stat_count = count_reg;
assign stat_rng = rng_reg;

endmodule

`resetall
