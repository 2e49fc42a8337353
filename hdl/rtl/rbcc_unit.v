// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * RBCC unit: ABT (block RAM), per-port aggregates, reciprocal table, fair
 * share and rate stamp (RBCC.md "Per packet", with Amendment 1: a flow
 * recorded as limited is offered the share it would get here), bit-exact
 * with the reference model (ratelab_model.rbcc)
 *
 * Fully pipelined: one admitted RBCC packet per cycle, result 6 cycles later
 * (m_valid). Stages: 0 CRC-32 slot index; 1 ABT read; 2 hit / update /
 * insert / eviction / collision, ABT write, aggregates read-modify-write
 * (flops, so back-to-back packets of one port see each other's updates), the
 * fair-share operands; 3 reciprocal read; 4 multiply; 5 min-rate and stamp.
 * Same-slot hazard: a packet in stage 2 takes the ABT entry written in the
 * previous cycle from a bypass register instead of the RAM (whose read in
 * that cycle returned the old entry); older writes are in the RAM already.
 *
 * Slot = low bits of CRC-32 (IEEE 802.3, as zlib.crc32) over src (32),
 * dst (32), egress port number s_port_id (16), big-endian; s_port (the
 * hardware port index) selects the aggregates. An ABT entry holds valid, limited,
 * port, src, dst, rate and last_seen (48-bit us).
 *
 * After reset (or cfg_clear) the unit clears the ABT and the aggregates,
 * which takes SLOTS cycles with s_ready low.
 */
module rbcc_unit #
(
    // number of egress ports
    parameter PORTS = 4,
    // egress port number width (<= 16)
    parameter PORT_WIDTH = 2,
    // ABT slots (a power of two)
    parameter SLOTS = 1024,
    // width of the tag that travels with a packet
    parameter TAG_WIDTH = 8,
    parameter SLOT_WIDTH = clog2(SLOTS),
    // aggregate flow counts: 0..SLOTS
    parameter N_WIDTH = SLOT_WIDTH + 1
)
(
    input  wire                      clk,
    input  wire                      rst,

    /*
     * Configuration
     */
    input  wire [31:0]               cfg_router_id,
    input  wire [31:0]               cfg_idle_timeout_us,
    input  wire [31:0]               cfg_min_rate,
    input  wire [PORTS*32-1:0]       cfg_capacity,
    // clear the ABT and the aggregates
    input  wire                      cfg_clear,
    // recip[k] = floor(2^32 / k), 1 <= k <= SLOTS (written at address k-1)
    input  wire                      recip_wr_en,
    input  wire [SLOT_WIDTH-1:0]     recip_wr_addr,
    input  wire [32:0]               recip_wr_data,

    /*
     * Admitted RBCC packet
     */
    input  wire                      s_valid,
    output wire                      s_ready,
    input  wire [PORT_WIDTH-1:0]     s_port,
    // the port's number as the control plane names it (hashed into the slot)
    input  wire [15:0]               s_port_id,
    input  wire [31:0]               s_src,
    input  wire [31:0]               s_dst,
    // FIN flag of the RBCC header (frees the flow's slot)
    input  wire                      s_fin,
    input  wire [31:0]               s_rate,
    input  wire [31:0]               s_return_bottle_node,
    input  wire [31:0]               s_current_rate,
    input  wire [47:0]               s_now_us,
    input  wire [TAG_WIDTH-1:0]      s_tag,

    /*
     * Result: if m_stamp, rate := m_share and bottle_node := router id
     */
    output wire                      m_valid,
    output wire                      m_stamp,
    output wire [31:0]               m_share,
    // 0 = hit, 1 = update, 2 = collision
    output wire [1:0]                m_outcome,
    output wire [PORT_WIDTH-1:0]     m_port,
    output wire [TAG_WIDTH-1:0]      m_tag,

    /*
     * Counter increments (one cycle per packet, at stage 2)
     */
    output wire [PORTS-1:0]          cnt_packets,
    output wire [PORTS-1:0]          cnt_hits,
    output wire [PORTS-1:0]          cnt_updates,
    output wire [PORTS-1:0]          cnt_inserts,
    output wire [PORTS*2-1:0]        cnt_removals,
    output wire [PORTS-1:0]          cnt_collisions,

    /*
     * Aggregates, for the register map
     */
    output wire [PORTS*N_WIDTH-1:0]  stat_n,
    output wire [PORTS*N_WIDTH-1:0]  stat_n_limited,
    output wire [PORTS*64-1:0]       stat_sum_limited
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
    if ((1 << SLOT_WIDTH) != SLOTS || SLOTS < 2) begin : check_slots
        param_error_SLOTS_must_be_a_power_of_two_at_least_2 bad();
    end
    if (PORT_WIDTH < 1 || PORT_WIDTH > 16 || (1 << PORT_WIDTH) < PORTS) begin : check_port_width
        param_error_PORT_WIDTH_must_be_1_to_16_and_hold_PORTS bad();
    end
endgenerate

localparam [1:0]
    OUTCOME_HIT = 2'd0,
    OUTCOME_UPDATE = 2'd1,
    OUTCOME_COLLISION = 2'd2;

// ABT entry: {valid, limited, port, src, dst, rate, last_seen}
localparam ENTRY_WIDTH = 1 + 1 + PORT_WIDTH + 32 + 32 + 32 + 48;

/*
 * CRC-32 (reflected, polynomial 0xEDB88320, init and final xor 0xffffffff)
 * over 10 bytes, first byte in bits [79:72], each byte LSB first
 */
function [31:0] crc32_80(input [79:0] data);
    integer bi, bit_i;
    reg [31:0] c;
    reg fb;
    begin
        c = 32'hffffffff;
        for (bi = 0; bi < 10; bi = bi + 1) begin
            for (bit_i = 0; bit_i < 8; bit_i = bit_i + 1) begin
                fb = c[0] ^ data[79 - 8*bi - 7 + bit_i];
                c = {1'b0, c[31:1]} ^ (fb ? 32'hedb88320 : 32'd0);
            end
        end
        crc32_80 = ~c;
    end
endfunction

/*
 * Clear sequencer
 */
reg init_reg;
reg [SLOT_WIDTH-1:0] init_ptr_reg;

always @(posedge clk) begin
    if (init_reg) begin
        init_ptr_reg <= init_ptr_reg + 1'b1;
        if (init_ptr_reg == SLOTS[SLOT_WIDTH-1:0] - 1'b1) begin
            init_reg <= 1'b0;
        end
    end
    if (rst || cfg_clear) begin
        init_reg <= 1'b1;
        init_ptr_reg <= {SLOT_WIDTH{1'b0}};
    end
end

assign s_ready = !init_reg;

/*
 * Stage 0 -> 1: slot index
 */
reg p1_valid_reg;
reg [SLOT_WIDTH-1:0] p1_index_reg;
reg [PORT_WIDTH-1:0] p1_port_reg;
reg [31:0] p1_src_reg, p1_dst_reg, p1_rate_reg, p1_rbn_reg, p1_cur_reg;
reg p1_fin_reg;
reg [47:0] p1_now_reg;
reg [TAG_WIDTH-1:0] p1_tag_reg;

// Waiver: the slot index keeps the low SLOT_WIDTH bits of the CRC by definition
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] s_crc = crc32_80({s_src, s_dst, s_port_id});
/* verilator lint_on UNUSEDSIGNAL */

always @(posedge clk) begin
    p1_valid_reg <= s_valid && s_ready;
    p1_index_reg <= s_crc[SLOT_WIDTH-1:0];
    p1_port_reg <= s_port;
    p1_src_reg <= s_src;
    p1_dst_reg <= s_dst;
    p1_rate_reg <= s_rate;
    p1_rbn_reg <= s_return_bottle_node;
    p1_cur_reg <= s_current_rate;
    p1_fin_reg <= s_fin;
    p1_now_reg <= s_now_us;
    p1_tag_reg <= s_tag;
    if (rst) begin
        p1_valid_reg <= 1'b0;
    end
end

/*
 * ABT RAM: read in stage 1, write in stage 2 (or by the clear sequencer)
 */
reg [ENTRY_WIDTH-1:0] abt_mem [0:SLOTS-1];
reg [ENTRY_WIDTH-1:0] abt_rd_reg;
reg abt_wr_en;
reg [SLOT_WIDTH-1:0] abt_wr_addr;
reg [ENTRY_WIDTH-1:0] abt_wr_data;

always @(posedge clk) begin
    abt_rd_reg <= abt_mem[p1_index_reg];
    if (abt_wr_en) begin
        abt_mem[abt_wr_addr] <= abt_wr_data;
    end
end

reg p2_valid_reg;
reg [SLOT_WIDTH-1:0] p2_index_reg;
reg [PORT_WIDTH-1:0] p2_port_reg;
reg [31:0] p2_src_reg, p2_dst_reg, p2_rate_reg, p2_rbn_reg, p2_cur_reg;
reg p2_fin_reg;
reg [47:0] p2_now_reg;
reg [TAG_WIDTH-1:0] p2_tag_reg;

always @(posedge clk) begin
    p2_valid_reg <= p1_valid_reg;
    p2_index_reg <= p1_index_reg;
    p2_port_reg <= p1_port_reg;
    p2_src_reg <= p1_src_reg;
    p2_dst_reg <= p1_dst_reg;
    p2_rate_reg <= p1_rate_reg;
    p2_rbn_reg <= p1_rbn_reg;
    p2_cur_reg <= p1_cur_reg;
    p2_fin_reg <= p1_fin_reg;
    p2_now_reg <= p1_now_reg;
    p2_tag_reg <= p1_tag_reg;
    if (rst) begin
        p2_valid_reg <= 1'b0;
    end
end

// bypass of the previous cycle's stage-2 write
reg byp_valid_reg;
reg [SLOT_WIDTH-1:0] byp_index_reg;
reg [ENTRY_WIDTH-1:0] byp_data_reg;

/*
 * Stage 2: the ABT decision and the aggregates
 */
reg [PORTS*N_WIDTH-1:0] n_reg, n_next;
reg [PORTS*N_WIDTH-1:0] nl_reg, nl_next;
reg [PORTS*64-1:0] sum_reg, sum_next;

reg [ENTRY_WIDTH-1:0] old;
reg old_valid, old_limited;
reg [PORT_WIDTH-1:0] old_port;
reg [31:0] old_src, old_dst, old_rate;
reg [47:0] old_seen;
reg [47:0] idle_us;
reg held, collision, evict, insert, limited, hit, fin;
reg [1:0] outcome;

reg [N_WIDTH-1:0] n_i, nl_i;
reg [63:0] sum_i;
reg [N_WIDTH-1:0] n_p, nl_p;
reg [63:0] sum_p;
reg [31:0] cap_p;
reg [N_WIDTH-1:0] k_count;
reg [SLOT_WIDTH-1:0] k_addr;
reg [31:0] diff;
reg own;
reg [63:0] rest;

reg [PORTS-1:0] c_packets, c_hits, c_updates, c_inserts, c_collisions;
reg [PORTS*2-1:0] c_removals;

integer i;

always @* begin
    old = (byp_valid_reg && byp_index_reg == p2_index_reg) ? byp_data_reg : abt_rd_reg;
    {old_valid, old_limited, old_port, old_src, old_dst, old_rate, old_seen} = old;

    idle_us = p2_now_reg - old_seen;
    held = old_valid && old_src == p2_src_reg && old_dst == p2_dst_reg && old_port == p2_port_reg;
    collision = old_valid && !held && idle_us <= {16'd0, cfg_idle_timeout_us};
    evict = old_valid && !held && !collision;
    insert = !held && !collision;
    limited = (p2_rbn_reg != cfg_router_id);
    hit = held && old_limited == limited && (!limited || old_rate == p2_cur_reg);
    fin = p2_fin_reg && !collision;
    outcome = collision ? OUTCOME_COLLISION : (hit ? OUTCOME_HIT : OUTCOME_UPDATE);

    // ABT write
    abt_wr_en = 1'b0;
    abt_wr_addr = p2_index_reg;
    abt_wr_data = {1'b1, limited, p2_port_reg, p2_src_reg, p2_dst_reg, p2_cur_reg, p2_now_reg};
    if (init_reg) begin
        abt_wr_en = 1'b1;
        abt_wr_addr = init_ptr_reg;
        abt_wr_data = {ENTRY_WIDTH{1'b0}};
    end else if (p2_valid_reg && !collision) begin
        abt_wr_en = 1'b1;
        if (fin) begin
            abt_wr_data = {ENTRY_WIDTH{1'b0}};
        end else if (hit) begin
            abt_wr_data = {old[ENTRY_WIDTH-1:48], p2_now_reg};
        end
    end

    // aggregates
    n_next = n_reg;
    nl_next = nl_reg;
    sum_next = sum_reg;
    n_p = {N_WIDTH{1'b0}};
    nl_p = {N_WIDTH{1'b0}};
    sum_p = 64'd0;
    cap_p = 32'd0;
    c_packets = {PORTS{1'b0}};
    c_hits = {PORTS{1'b0}};
    c_updates = {PORTS{1'b0}};
    c_inserts = {PORTS{1'b0}};
    c_collisions = {PORTS{1'b0}};
    c_removals = {PORTS*2{1'b0}};
    for (i = 0; i < PORTS; i = i + 1) begin
        n_i = n_reg[i*N_WIDTH +: N_WIDTH];
        nl_i = nl_reg[i*N_WIDTH +: N_WIDTH];
        sum_i = sum_reg[i*64 +: 64];
        if (p2_valid_reg) begin
            // a stale flow of any port leaves the slot
            if (evict && {{32-PORT_WIDTH{1'b0}}, old_port} == i) begin
                n_i = n_i - 1'b1;
                if (old_limited) begin
                    nl_i = nl_i - 1'b1;
                    sum_i = sum_i - {32'd0, old_rate};
                end
                c_removals[i*2 +: 2] = c_removals[i*2 +: 2] + 2'd1;
            end
            if ({{32-PORT_WIDTH{1'b0}}, p2_port_reg} == i) begin
                c_packets[i] = 1'b1;
                c_collisions[i] = collision;
                c_hits[i] = !collision && hit;
                c_updates[i] = !collision && !hit;
                c_inserts[i] = insert;
                if (insert) begin
                    n_i = n_i + 1'b1;
                end
                if (!collision && !hit) begin
                    if (held && old_limited) begin
                        nl_i = nl_i - 1'b1;
                        sum_i = sum_i - {32'd0, old_rate};
                    end
                    if (limited) begin
                        nl_i = nl_i + 1'b1;
                        sum_i = sum_i + {32'd0, p2_cur_reg};
                    end
                end
                // the share uses the aggregates as this packet left them, before a FIN
                n_p = n_i;
                nl_p = nl_i;
                sum_p = sum_i;
                cap_p = cfg_capacity[i*32 +: 32];
                if (fin) begin
                    // the slot now holds this flow with rate current_rate
                    n_i = n_i - 1'b1;
                    if (limited) begin
                        nl_i = nl_i - 1'b1;
                        sum_i = sum_i - {32'd0, p2_cur_reg};
                    end
                    c_removals[i*2 +: 2] = c_removals[i*2 +: 2] + 2'd1;
                end
            end
        end
        n_next[i*N_WIDTH +: N_WIDTH] = n_i;
        nl_next[i*N_WIDTH +: N_WIDTH] = nl_i;
        sum_next[i*64 +: 64] = sum_i;
    end

    // fair-share operands (RBCC.md step 4, Amendment 1): a flow whose slot
    // holds limited = 1 (not a collision; its recorded rate is current_rate
    // on a hit and an update alike) leaves the limited set and joins the
    // sharers; any other packet gets the port's plain share
    own = !collision && limited;
    rest = own ? sum_p - {32'd0, p2_cur_reg} : sum_p;
    if ({32'd0, cap_p} > rest) begin
        k_count = n_p - nl_p + {{N_WIDTH-1{1'b0}}, own};
        diff = cap_p - rest[31:0];
    end else begin
        k_count = n_p;
        diff = cap_p;
    end
    if (k_count == {N_WIDTH{1'b0}}) begin
        k_count = {{N_WIDTH-1{1'b0}}, 1'b1};
    end
    k_addr = k_count[SLOT_WIDTH-1:0] - 1'b1;
end

reg p3_valid_reg;
reg [31:0] p3_diff_reg, p3_rate_reg;
reg [1:0] p3_outcome_reg;
reg [PORT_WIDTH-1:0] p3_port_reg;
reg [TAG_WIDTH-1:0] p3_tag_reg;
reg [PORTS-1:0] cnt_packets_reg, cnt_hits_reg, cnt_updates_reg, cnt_inserts_reg;
reg [PORTS-1:0] cnt_collisions_reg;
reg [PORTS*2-1:0] cnt_removals_reg;

// reciprocal table, read in stage 3
reg [32:0] recip_mem [0:SLOTS-1];
reg [32:0] recip_rd_reg;
reg [SLOT_WIDTH-1:0] k_addr_reg;

always @(posedge clk) begin
    if (recip_wr_en) begin
        recip_mem[recip_wr_addr] <= recip_wr_data;
    end
    recip_rd_reg <= recip_mem[k_addr_reg];
end

always @(posedge clk) begin
    n_reg <= n_next;
    nl_reg <= nl_next;
    sum_reg <= sum_next;

    byp_valid_reg <= p2_valid_reg && abt_wr_en && !init_reg;
    byp_index_reg <= abt_wr_addr;
    byp_data_reg <= abt_wr_data;

    p3_valid_reg <= p2_valid_reg;
    k_addr_reg <= k_addr;
    p3_diff_reg <= diff;
    p3_rate_reg <= p2_rate_reg;
    p3_outcome_reg <= outcome;
    p3_port_reg <= p2_port_reg;
    p3_tag_reg <= p2_tag_reg;

    cnt_packets_reg <= c_packets;
    cnt_hits_reg <= c_hits;
    cnt_updates_reg <= c_updates;
    cnt_inserts_reg <= c_inserts;
    cnt_collisions_reg <= c_collisions;
    cnt_removals_reg <= c_removals;

    if (rst || init_reg) begin
        n_reg <= {PORTS*N_WIDTH{1'b0}};
        nl_reg <= {PORTS*N_WIDTH{1'b0}};
        sum_reg <= {PORTS*64{1'b0}};
        byp_valid_reg <= 1'b0;
    end
    if (rst) begin
        p3_valid_reg <= 1'b0;
        cnt_packets_reg <= {PORTS{1'b0}};
        cnt_hits_reg <= {PORTS{1'b0}};
        cnt_updates_reg <= {PORTS{1'b0}};
        cnt_inserts_reg <= {PORTS{1'b0}};
        cnt_collisions_reg <= {PORTS{1'b0}};
        cnt_removals_reg <= {PORTS*2{1'b0}};
    end
end

/*
 * Stage 4: multiply; stage 5: min rate and stamp
 */
reg p4_valid_reg;
reg [31:0] p4_diff_reg, p4_rate_reg;
reg [1:0] p4_outcome_reg;
reg [PORT_WIDTH-1:0] p4_port_reg;
reg [TAG_WIDTH-1:0] p4_tag_reg;

always @(posedge clk) begin
    p4_valid_reg <= p3_valid_reg;
    p4_diff_reg <= p3_diff_reg;
    p4_rate_reg <= p3_rate_reg;
    p4_outcome_reg <= p3_outcome_reg;
    p4_port_reg <= p3_port_reg;
    p4_tag_reg <= p3_tag_reg;
    if (rst) begin
        p4_valid_reg <= 1'b0;
    end
end

// Waiver: share = product >> 32; the low half is unused by definition and
// the top bit is zero (diff < 2^32, recip <= 2^32).
/* verilator lint_off UNUSEDSIGNAL */
wire [64:0] share_prod = {33'd0, p4_diff_reg} * {32'd0, recip_rd_reg};
/* verilator lint_on UNUSEDSIGNAL */

reg p5_valid_reg;
reg [31:0] p5_share_raw_reg, p5_rate_reg;
reg [1:0] p5_outcome_reg;
reg [PORT_WIDTH-1:0] p5_port_reg;
reg [TAG_WIDTH-1:0] p5_tag_reg;

always @(posedge clk) begin
    p5_valid_reg <= p4_valid_reg;
    p5_share_raw_reg <= share_prod[63:32];
    p5_rate_reg <= p4_rate_reg;
    p5_outcome_reg <= p4_outcome_reg;
    p5_port_reg <= p4_port_reg;
    p5_tag_reg <= p4_tag_reg;
    if (rst) begin
        p5_valid_reg <= 1'b0;
    end
end

wire [31:0] share = (p5_share_raw_reg < cfg_min_rate) ? cfg_min_rate : p5_share_raw_reg;

reg m_valid_reg, m_stamp_reg;
reg [31:0] m_share_reg;
reg [1:0] m_outcome_reg;
reg [PORT_WIDTH-1:0] m_port_reg;
reg [TAG_WIDTH-1:0] m_tag_reg;

always @(posedge clk) begin
    m_valid_reg <= p5_valid_reg;
    m_stamp_reg <= share < p5_rate_reg;
    m_share_reg <= share;
    m_outcome_reg <= p5_outcome_reg;
    m_port_reg <= p5_port_reg;
    m_tag_reg <= p5_tag_reg;
    if (rst) begin
        m_valid_reg <= 1'b0;
    end
end

assign m_valid = m_valid_reg;
assign m_stamp = m_stamp_reg;
assign m_share = m_share_reg;
assign m_outcome = m_outcome_reg;
assign m_port = m_port_reg;
assign m_tag = m_tag_reg;

assign cnt_packets = cnt_packets_reg;
assign cnt_hits = cnt_hits_reg;
assign cnt_updates = cnt_updates_reg;
assign cnt_inserts = cnt_inserts_reg;
assign cnt_removals = cnt_removals_reg;
assign cnt_collisions = cnt_collisions_reg;

assign stat_n = n_reg;
assign stat_n_limited = nl_reg;
assign stat_sum_limited = sum_reg;

endmodule

`resetall
