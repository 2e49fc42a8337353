// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * ratelab router core: IPv4 forwarding, FIFO/RED admission with the model's
 * drain schedule, RBCC stamping, per-port counters, AXI-Lite control
 *
 * Data path, per ingress port: the frame is stored in an ingress FIFO while
 * router_parser taps it; at its end the header is checked (ipv4_check) and a
 * descriptor queued. One shared decision pipeline takes a descriptor per
 * cycle (round robin over ingress ports): LPM (lpm_tcam) and next hop,
 * verdict, admission at the egress port (egress_admit: RED/FIFO and the
 * drain schedule), RBCC (rbcc_unit) for admitted RBCC packets. Every stage
 * has a fixed latency, so results leave in issue order; each goes to its
 * ingress port's result FIFO. The frame is then read from the ingress FIFO,
 * rewritten (frame_rewrite) or dropped, and sent through a per-egress
 * round-robin arbiter into the egress queue (pkt_queue), which the egress
 * admission's release pulses let onto the wire (the shaper).
 *
 * Processing order per packet is the reference model's: forwarding, then
 * admission, then RBCC for admitted RBCC packets only. Frames with tuser[0]
 * set on their last beat are dropped (counter drop_rx_error).
 *
 * Time: a free-running microsecond counter (CLK_PER_US cycles per us),
 * loadable and freezable through the register map.
 *
 * The register map is in hdl/README.md.
 */
module router_core #
(
    // number of Ethernet ports
    parameter PORTS = 4,
    // width of the AXI-Stream data buses in bits (64, 128 or 256)
    parameter DATA_WIDTH = 64,
    // tkeep width (one bit per byte)
    parameter KEEP_WIDTH = (DATA_WIDTH/8),
    // tuser width (bit 0: bad frame, on the last beat)
    parameter USER_WIDTH = 1,
    // LPM routes (priority TCAM entries)
    parameter LPM_ENTRIES = 32,
    // next-hop table entries
    parameter NH_ENTRIES = 16,
    // ABT slots (a power of two)
    parameter ABT_SLOTS = 1024,
    // RED idle-decay table entries per port
    parameter DECAY_LEN = 16384,
    // per-port pending-packet FIFO (packets); larger queue limits act as it.
    // 512 holds every AQM preset's queue limit (redok-lte: 400)
    parameter PEND_DEPTH = 512,
    // ingress frame FIFO depth in beats (a power of two)
    parameter IN_FIFO_DEPTH = 512,
    // egress queue depth in beats (a power of two)
    parameter OUT_FIFO_DEPTH = 2048,
    // clock cycles per microsecond
    parameter CLK_PER_US = 250,
    // AXI-Lite address width
    parameter AXIL_ADDR_WIDTH = 16,
    parameter PORT_WIDTH = (PORTS > 1) ? clog2(PORTS) : 1
)
(
    input  wire                          clk,
    input  wire                          rst,

    /*
     * Ethernet ports in
     */
    input  wire [PORTS*DATA_WIDTH-1:0]   s_axis_tdata,
    input  wire [PORTS*KEEP_WIDTH-1:0]   s_axis_tkeep,
    input  wire [PORTS-1:0]              s_axis_tvalid,
    output wire [PORTS-1:0]              s_axis_tready,
    input  wire [PORTS-1:0]              s_axis_tlast,
    input  wire [PORTS*USER_WIDTH-1:0]   s_axis_tuser,

    /*
     * Ethernet ports out
     */
    output wire [PORTS*DATA_WIDTH-1:0]   m_axis_tdata,
    output wire [PORTS*KEEP_WIDTH-1:0]   m_axis_tkeep,
    output wire [PORTS-1:0]              m_axis_tvalid,
    input  wire [PORTS-1:0]              m_axis_tready,
    output wire [PORTS-1:0]              m_axis_tlast,
    output wire [PORTS*USER_WIDTH-1:0]   m_axis_tuser,

    /*
     * AXI-Lite control
     */
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_awaddr,
    input  wire [2:0]                    s_axil_awprot,
    input  wire                          s_axil_awvalid,
    output wire                          s_axil_awready,
    input  wire [31:0]                   s_axil_wdata,
    input  wire [3:0]                    s_axil_wstrb,
    input  wire                          s_axil_wvalid,
    output wire                          s_axil_wready,
    output wire [1:0]                    s_axil_bresp,
    output wire                          s_axil_bvalid,
    input  wire                          s_axil_bready,
    input  wire [AXIL_ADDR_WIDTH-1:0]    s_axil_araddr,
    input  wire [2:0]                    s_axil_arprot,
    input  wire                          s_axil_arvalid,
    output wire                          s_axil_arready,
    output wire [31:0]                   s_axil_rdata,
    output wire [1:0]                    s_axil_rresp,
    output wire                          s_axil_rvalid,
    input  wire                          s_axil_rready
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

localparam NH_WIDTH = (NH_ENTRIES > 1) ? clog2(NH_ENTRIES) : 1;
localparam LPM_ADDR_WIDTH = clog2(LPM_ENTRIES);
localparam SLOT_WIDTH = clog2(ABT_SLOTS);
localparam N_WIDTH = SLOT_WIDTH + 1;
localparam DECAY_ADDR_WIDTH = clog2(DECAY_LEN);
localparam QLEN_WIDTH = 16;

// descriptor queued per frame by an ingress port
localparam DESC_WIDTH = 1 + 2 + 1 + 1 + 16 + 8 + 16 + 32 + 32 + 1 + 7 + 1 + 32 + 32 + 32;
localparam DESC_DEPTH = 8;
// results in flight per ingress port (and its result FIFO depth)
localparam RES_DEPTH = 16;
// verdict FIFO before admission
localparam VF_DEPTH = 16;
// fixed latencies of egress_admit and rbcc_unit (request to result)
localparam ADMIT_LATENCY = 6;
localparam RBCC_LATENCY = 6;

localparam COUNTERS = 18;

// forwarding causes (0 = forward)
localparam [2:0]
    CAUSE_FWD = 3'd0,
    CAUSE_NOT_IPV4 = 3'd1,
    CAUSE_MALFORMED = 3'd2,
    CAUSE_BAD_CHECKSUM = 3'd3,
    CAUSE_TTL_EXPIRED = 3'd4,
    CAUSE_NO_ROUTE = 3'd5,
    CAUSE_RX_ERROR = 3'd6;

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (PORTS < 1 || PORTS > 16) begin : check_ports
        param_error_PORTS_must_be_1_to_16 bad();
    end
    if (DATA_WIDTH != 64 && DATA_WIDTH != 128 && DATA_WIDTH != 256) begin : check_data_width
        param_error_DATA_WIDTH_must_be_64_128_or_256 bad();
    end
    if (AXIL_ADDR_WIDTH < 14 || (PORTS * 512 + 4096) > (1 << AXIL_ADDR_WIDTH)) begin : check_axil_addr_width
        param_error_AXIL_ADDR_WIDTH_too_small_for_the_register_map bad();
    end
endgenerate

genvar gi;
integer i;

/*
 * Time
 */
reg [47:0] now_us_reg;
reg [15:0] prescale_reg;
reg time_freeze_reg;

/*
 * Control-plane registers
 */
reg [31:0] router_id_reg;
reg [31:0] idle_timeout_reg;
reg [31:0] min_rate_reg;
reg [31:0] lpm_prefix_reg, lpm_mask_reg;
reg [NH_WIDTH-1:0] lpm_nh_reg;
reg lpm_wr_en_reg;
reg lpm_wr_valid_reg;
reg [LPM_ADDR_WIDTH-1:0] lpm_wr_addr_reg;
reg [47:0] nh_mac_reg;
reg [PORT_WIDTH-1:0] nh_port_reg;
reg nh_wr_en_reg;
reg [NH_WIDTH-1:0] nh_wr_addr_reg;
reg [32:0] recip_reg;
reg recip_wr_en_reg;
reg [SLOT_WIDTH-1:0] recip_wr_addr_reg;
reg abt_clear_reg;
reg cnt_clear_reg;
reg [31:0] time_lo_reg;

reg [PORTS*16-1:0] port_id_reg;
reg [PORTS*48-1:0] port_mac_reg;
reg [PORTS-1:0] red_en_reg;
reg [PORTS*QLEN_WIDTH-1:0] qlimit_reg;
reg [PORTS*40-1:0] rate_reg;
reg [PORTS*32-1:0] capacity_reg;
reg [PORTS*17-1:0] wq16_reg;
reg [PORTS*32-1:0] th_min_reg, th_max_reg;
reg [PORTS*33-1:0] slope_reg, s_recip_reg;
reg [PORTS*32-1:0] seed_reg;
reg [PORTS-1:0] seed_load_reg;
reg [PORTS*(DECAY_ADDR_WIDTH+1)-1:0] decay_used_reg;
reg [PORTS*DECAY_ADDR_WIDTH-1:0] decay_addr_reg;
reg [PORTS-1:0] decay_wr_reg;
reg [DECAY_ADDR_WIDTH-1:0] decay_wr_addr_reg;
reg [16:0] decay_data_reg;

/*
 * Status from the blocks
 */
wire [PORTS*QLEN_WIDTH-1:0] eg_stat_qlen;
wire [PORTS*32-1:0] eg_stat_avg, eg_stat_count, eg_stat_rng;
reg [PORTS*QLEN_WIDTH-1:0] last_q_reg;
reg [PORTS*32-1:0] last_avg_reg;
wire [PORTS*N_WIDTH-1:0] agg_n, agg_nl;
wire [PORTS*64-1:0] agg_sum;
wire rbcc_ready;

/*
 * Counter increments, per port, COUNTERS x 16 bits
 */
reg [PORTS*COUNTERS*16-1:0] cnt_inc;

/*
 * Ingress ports
 */
wire [PORTS-1:0] desc_valid;
wire [PORTS-1:0] desc_pop;
wire [PORTS*DESC_WIDTH-1:0] desc_data;

wire [PORTS*DATA_WIDTH-1:0] iq_tdata;
wire [PORTS*KEEP_WIDTH-1:0] iq_tkeep;
wire [PORTS-1:0] iq_tvalid, iq_tready, iq_tlast;
wire [PORTS*USER_WIDTH-1:0] iq_tuser;

generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_in
        wire [DESC_WIDTH-1:0] desc_in;
        wire desc_in_valid;
        wire [clog2(DESC_DEPTH):0] desc_count;
        // room for every frame that may still finish in the parser/check pipeline
        wire desc_stall = desc_count > DESC_DEPTH - 6;
        wire in_ready;

        assign s_axis_tready[gi] = in_ready && !desc_stall;

        // Waiver: the ingress FIFO needs no packet count (admission counts at
        // the egress port), so these pkt_queue outputs are left unused.
        /* verilator lint_off UNUSEDSIGNAL */
        wire [QLEN_WIDTH-1:0] unused_qlen;
        wire unused_sop, unused_empty;
        wire [clog2(IN_FIFO_DEPTH):0] unused_beats;
        /* verilator lint_on UNUSEDSIGNAL */

        pkt_queue #(
            .DATA_WIDTH(DATA_WIDTH),
            .KEEP_WIDTH(KEEP_WIDTH),
            .USER_WIDTH(USER_WIDTH),
            .DEPTH(IN_FIFO_DEPTH),
            .QLEN_WIDTH(QLEN_WIDTH)
        )
        in_fifo_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_tdata(s_axis_tdata[gi*DATA_WIDTH +: DATA_WIDTH]),
            .s_axis_tkeep(s_axis_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH]),
            .s_axis_tvalid(s_axis_tvalid[gi] && !desc_stall),
            .s_axis_tready(in_ready),
            .s_axis_tlast(s_axis_tlast[gi]),
            .s_axis_tuser(s_axis_tuser[gi*USER_WIDTH +: USER_WIDTH]),
            .m_axis_tdata(iq_tdata[gi*DATA_WIDTH +: DATA_WIDTH]),
            .m_axis_tkeep(iq_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH]),
            .m_axis_tvalid(iq_tvalid[gi]),
            .m_axis_tready(iq_tready[gi]),
            .m_axis_tlast(iq_tlast[gi]),
            .m_axis_tuser(iq_tuser[gi*USER_WIDTH +: USER_WIDTH]),
            .admit(1'b0),
            .qlen(unused_qlen),
            .m_sop(unused_sop),
            .went_empty(unused_empty),
            .status_beats(unused_beats)
        );

        // Waiver: the parser reports every header field; the core needs only
        // some of them (Ethernet addresses, next_proto, bottle_node, ...).
        /* verilator lint_off UNUSEDSIGNAL */
        wire p_valid;
        wire [15:0] p_len;
        wire p_err;
        wire [1:0] p_status;
        wire [47:0] p_eth_dst, p_eth_src;
        wire [15:0] p_eth_type;
        wire [3:0] p_ihl;
        wire [15:0] p_total_len;
        wire [7:0] p_ttl, p_proto;
        wire [15:0] p_csum;
        wire [31:0] p_src, p_dst;
        wire [479:0] p_ip_hdr;
        wire p_rbcc;
        wire [6:0] p_rbcc_off;
        wire [3:0] p_rbcc_flags;
        wire [7:0] p_rbcc_next;
        wire [31:0] p_rbcc_rate, p_rbcc_bn, p_rbcc_rr, p_rbcc_rbn, p_rbcc_cur;
        /* verilator lint_on UNUSEDSIGNAL */

        router_parser #(
            .DATA_WIDTH(DATA_WIDTH),
            .KEEP_WIDTH(KEEP_WIDTH),
            .USER_WIDTH(USER_WIDTH)
        )
        parser_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_tdata(s_axis_tdata[gi*DATA_WIDTH +: DATA_WIDTH]),
            .s_axis_tkeep(s_axis_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH]),
            .s_axis_tvalid(s_axis_tvalid[gi]),
            .s_axis_tready(s_axis_tready[gi]),
            .s_axis_tlast(s_axis_tlast[gi]),
            .s_axis_tuser(s_axis_tuser[gi*USER_WIDTH +: USER_WIDTH]),
            .m_hdr_valid(p_valid),
            .m_frame_len(p_len),
            .m_frame_error(p_err),
            .m_status(p_status),
            .m_eth_dst(p_eth_dst),
            .m_eth_src(p_eth_src),
            .m_eth_type(p_eth_type),
            .m_ip_ihl(p_ihl),
            .m_ip_total_len(p_total_len),
            .m_ip_ttl(p_ttl),
            .m_ip_proto(p_proto),
            .m_ip_csum(p_csum),
            .m_ip_src(p_src),
            .m_ip_dst(p_dst),
            .m_ip_hdr(p_ip_hdr),
            .m_rbcc_valid(p_rbcc),
            .m_rbcc_offset(p_rbcc_off),
            .m_rbcc_flags(p_rbcc_flags),
            .m_rbcc_next_proto(p_rbcc_next),
            .m_rbcc_rate(p_rbcc_rate),
            .m_rbcc_bottle_node(p_rbcc_bn),
            .m_rbcc_return_rate(p_rbcc_rr),
            .m_rbcc_return_bottle_node(p_rbcc_rbn),
            .m_rbcc_current_rate(p_rbcc_cur)
        );

        wire c_valid, c_csum_ok, c_ttl_ok;
        wire [7:0] c_ttl;
        wire [15:0] c_csum;

        ipv4_check check_inst (
            .clk(clk),
            .rst(rst),
            .s_valid(p_valid),
            .s_hdr(p_ip_hdr),
            .s_ihl(p_ihl),
            .m_valid(c_valid),
            .m_csum_ok(c_csum_ok),
            .m_ttl_ok(c_ttl_ok),
            .m_ttl_new(c_ttl),
            .m_csum_new(c_csum)
        );

        // parser fields delayed to line up with the check (2 cycles)
        localparam PF_WIDTH = 1 + 2 + 16 + 32 + 32 + 1 + 7 + 1 + 32 + 32 + 32;
        wire [PF_WIDTH-1:0] pf = {p_err, p_status, p_len, p_src, p_dst, p_rbcc, p_rbcc_off,
            p_rbcc_flags[2], p_rbcc_rate, p_rbcc_rbn, p_rbcc_cur};
        reg [PF_WIDTH-1:0] pf_1_reg, pf_2_reg;

        always @(posedge clk) begin
            pf_1_reg <= pf;
            pf_2_reg <= pf_1_reg;
        end

        wire [0:0] d_err = pf_2_reg[PF_WIDTH-1 -: 1];
        wire [1:0] d_status = pf_2_reg[PF_WIDTH-2 -: 2];
        wire [PF_WIDTH-4:0] d_rest = pf_2_reg[PF_WIDTH-4:0];

        // {err, status, csum_ok, ttl_ok, len, ttl, csum, src, dst, rbcc, off, fin, rate, rbn, cur}
        assign desc_in = {d_err, d_status, c_csum_ok, c_ttl_ok, d_rest[PF_WIDTH-4 -: 16],
            c_ttl, c_csum, d_rest[PF_WIDTH-20:0]};
        assign desc_in_valid = c_valid;

        // Waiver: desc_stall keeps the FIFO from filling, so its s_ready is always 1
        /* verilator lint_off UNUSEDSIGNAL */
        wire desc_s_ready;
        /* verilator lint_on UNUSEDSIGNAL */

        fifo_fwft #(
            .WIDTH(DESC_WIDTH),
            .DEPTH(DESC_DEPTH)
        )
        desc_fifo_inst (
            .clk(clk),
            .rst(rst),
            .s_data(desc_in),
            .s_valid(desc_in_valid),
            .s_ready(desc_s_ready),
            .m_data(desc_data[gi*DESC_WIDTH +: DESC_WIDTH]),
            .m_valid(desc_valid[gi]),
            .m_ready(desc_pop[gi]),
            .count(desc_count)
        );
    end
endgenerate

/*
 * Decision pipeline: issue (round robin over ingress ports with credit)
 */
reg [PORT_WIDTH-1:0] rr_last_reg;
reg [clog2(RES_DEPTH):0] res_credit_reg [0:PORTS-1];
reg [clog2(VF_DEPTH):0] vf_credit_reg;
wire [PORTS-1:0] res_pop;
wire vf_pop;

reg issue;
reg [PORT_WIDTH-1:0] issue_port;
reg [PORT_WIDTH:0] cand;
integer k;

always @* begin
    issue = 1'b0;
    issue_port = {PORT_WIDTH{1'b0}};
    for (k = PORTS; k >= 1; k = k - 1) begin
        cand = {1'b0, rr_last_reg} + k[PORT_WIDTH:0];
        if (cand >= PORTS[PORT_WIDTH:0]) begin
            cand = cand - PORTS[PORT_WIDTH:0];
        end
        if (desc_valid[cand[PORT_WIDTH-1:0]] &&
                res_credit_reg[cand[PORT_WIDTH-1:0]] != RES_DEPTH[clog2(RES_DEPTH):0]) begin
            issue = 1'b1;
            issue_port = cand[PORT_WIDTH-1:0];
        end
    end
    if (vf_credit_reg == VF_DEPTH[clog2(VF_DEPTH):0] || !rbcc_ready) begin
        issue = 1'b0;
    end
end

generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_pop
        assign desc_pop[gi] = issue && issue_port == gi;
    end
endgenerate

wire [DESC_WIDTH-1:0] issue_desc = desc_data[issue_port*DESC_WIDTH +: DESC_WIDTH];

always @(posedge clk) begin
    if (issue) begin
        rr_last_reg <= issue_port;
    end
    for (i = 0; i < PORTS; i = i + 1) begin
        res_credit_reg[i] <= res_credit_reg[i]
            + {{clog2(RES_DEPTH){1'b0}}, issue && issue_port == i[PORT_WIDTH-1:0]}
            - {{clog2(RES_DEPTH){1'b0}}, res_pop[i]};
    end
    vf_credit_reg <= vf_credit_reg + {{clog2(VF_DEPTH){1'b0}}, issue}
        - {{clog2(VF_DEPTH){1'b0}}, vf_pop};
    if (rst) begin
        rr_last_reg <= PORTS[PORT_WIDTH-1:0] - 1'b1;
        for (i = 0; i < PORTS; i = i + 1) begin
            res_credit_reg[i] <= 0;
        end
        vf_credit_reg <= 0;
    end
end

/*
 * LPM (2 cycles) and next hop (1 cycle)
 */
wire lpm_valid, lpm_hit;
// Waiver: the matching entry's index is not needed, only its next hop
/* verilator lint_off UNUSEDSIGNAL */
wire [LPM_ADDR_WIDTH-1:0] lpm_index;
/* verilator lint_on UNUSEDSIGNAL */
wire [NH_WIDTH-1:0] lpm_nh;
wire [PORT_WIDTH+DESC_WIDTH-1:0] lpm_tag;

lpm_tcam #(
    .ENTRIES(LPM_ENTRIES),
    .DATA_WIDTH(NH_WIDTH),
    .TAG_WIDTH(PORT_WIDTH+DESC_WIDTH)
)
lpm_inst (
    .clk(clk),
    .rst(rst),
    .s_valid(issue),
    .s_key(issue_desc[105 +: 32]),  // ip dst
    .s_tag({issue_port, issue_desc}),
    .m_valid(lpm_valid),
    .m_hit(lpm_hit),
    .m_index(lpm_index),
    .m_data(lpm_nh),
    .m_tag(lpm_tag),
    .wr_en(lpm_wr_en_reg),
    .wr_addr(lpm_wr_addr_reg),
    .wr_valid(lpm_wr_valid_reg),
    .wr_prefix(lpm_prefix_reg),
    .wr_mask(lpm_mask_reg),
    .wr_data(lpm_nh_reg)
);

reg [PORT_WIDTH+48-1:0] nh_mem [0:NH_ENTRIES-1];
reg [PORT_WIDTH+48-1:0] nh_rd_reg;
reg v_valid_reg, v_hit_reg;
reg [PORT_WIDTH+DESC_WIDTH-1:0] v_tag_reg;

always @(posedge clk) begin
    if (nh_wr_en_reg) begin
        nh_mem[nh_wr_addr_reg] <= {nh_port_reg, nh_mac_reg};
    end
    nh_rd_reg <= nh_mem[lpm_nh];
    v_valid_reg <= lpm_valid;
    v_hit_reg <= lpm_hit;
    v_tag_reg <= lpm_tag;
    if (rst) begin
        v_valid_reg <= 1'b0;
    end
end

// descriptor fields of the packet at the verdict stage
wire [PORT_WIDTH-1:0] v_in_port = v_tag_reg[DESC_WIDTH +: PORT_WIDTH];
wire [DESC_WIDTH-1:0] v_desc = v_tag_reg[DESC_WIDTH-1:0];
wire v_err = v_desc[DESC_WIDTH-1];
wire [1:0] v_status = v_desc[DESC_WIDTH-2 -: 2];
wire v_csum_ok = v_desc[DESC_WIDTH-4];
wire v_ttl_ok = v_desc[DESC_WIDTH-5];

reg [2:0] v_cause;

always @* begin
    if (v_err) begin
        v_cause = CAUSE_RX_ERROR;
    end else if (v_status == 2'd2) begin
        v_cause = CAUSE_MALFORMED;
    end else if (v_status == 2'd1) begin
        v_cause = CAUSE_NOT_IPV4;
    end else if (!v_csum_ok) begin
        v_cause = CAUSE_BAD_CHECKSUM;
    end else if (!v_ttl_ok) begin
        v_cause = CAUSE_TTL_EXPIRED;
    end else if (!v_hit_reg) begin
        v_cause = CAUSE_NO_ROUTE;
    end else begin
        v_cause = CAUSE_FWD;
    end
end

// verdict FIFO entry: {in_port, cause, egress, nh_mac, desc}
localparam VF_WIDTH = PORT_WIDTH + 3 + PORT_WIDTH + 48 + DESC_WIDTH;

wire [VF_WIDTH-1:0] vf_head;
wire vf_valid;

// Waiver: credits keep the verdict FIFO from overflowing (s_ready always 1)
/* verilator lint_off UNUSEDSIGNAL */
wire vf_s_ready;
wire [clog2(VF_DEPTH):0] vf_count;
/* verilator lint_on UNUSEDSIGNAL */

fifo_fwft #(
    .WIDTH(VF_WIDTH),
    .DEPTH(VF_DEPTH)
)
vf_fifo_inst (
    .clk(clk),
    .rst(rst),
    .s_data({v_in_port, v_cause, nh_rd_reg, v_desc}),
    .s_valid(v_valid_reg),
    .s_ready(vf_s_ready),
    .m_data(vf_head),
    .m_valid(vf_valid),
    .m_ready(vf_pop),
    .count(vf_count)
);

wire [PORT_WIDTH-1:0] a_in_port = vf_head[VF_WIDTH-1 -: PORT_WIDTH];
wire [2:0] a_cause = vf_head[VF_WIDTH-PORT_WIDTH-1 -: 3];
wire [PORT_WIDTH-1:0] a_egress = vf_head[VF_WIDTH-PORT_WIDTH-4 -: PORT_WIDTH];
// Waiver: admission needs only the frame length of the descriptor
/* verilator lint_off UNUSEDSIGNAL */
wire [DESC_WIDTH-1:0] a_desc = vf_head[DESC_WIDTH-1:0];
/* verilator lint_on UNUSEDSIGNAL */
wire [15:0] a_len = a_desc[DESC_WIDTH-6 -: 16];

/*
 * Admission at the egress port
 */
wire [PORTS-1:0] eg_s_ready;
wire a_fwd = (a_cause == CAUSE_FWD);
assign vf_pop = vf_valid && (!a_fwd || eg_s_ready[a_egress]);

// Waiver: results are matched to requests by the fixed latency (the
// delay line), so m_valid itself is not needed
/* verilator lint_off UNUSEDSIGNAL */
wire [PORTS-1:0] eg_m_valid;
/* verilator lint_on UNUSEDSIGNAL */
wire [PORTS-1:0] eg_m_drop;
wire [PORTS*2-1:0] eg_m_cause;
wire [PORTS*QLEN_WIDTH-1:0] eg_m_qlen;
wire [PORTS*32-1:0] eg_m_avg;
wire [PORTS-1:0] eg_release;

generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_admit
        // Waiver: the tag is not needed, results are matched by fixed latency
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_tag;
        /* verilator lint_on UNUSEDSIGNAL */

        egress_admit #(
            .DECAY_LEN(DECAY_LEN),
            .QLEN_WIDTH(QLEN_WIDTH),
            .PEND_DEPTH(PEND_DEPTH),
            .TAG_WIDTH(1)
        )
        admit_inst (
            .clk(clk),
            .rst(rst),
            .now_us(now_us_reg),
            .cfg_rate_bps(rate_reg[gi*40 +: 40]),
            .cfg_red_enable(red_en_reg[gi]),
            .cfg_wq16(wq16_reg[gi*17 +: 17]),
            .cfg_th_min16(th_min_reg[gi*32 +: 32]),
            .cfg_th_max16(th_max_reg[gi*32 +: 32]),
            .cfg_slope(slope_reg[gi*33 +: 33]),
            .cfg_s_recip(s_recip_reg[gi*33 +: 33]),
            .cfg_queue_limit(qlimit_reg[gi*QLEN_WIDTH +: QLEN_WIDTH]),
            .cfg_load(seed_load_reg[gi]),
            .cfg_seed(seed_reg[gi*32 +: 32]),
            .cfg_decay_used(decay_used_reg[gi*(DECAY_ADDR_WIDTH+1) +: DECAY_ADDR_WIDTH+1]),
            .decay_wr_en(decay_wr_reg[gi]),
            .decay_wr_addr(decay_wr_addr_reg),
            .decay_wr_data(decay_data_reg),
            .s_valid(vf_pop && a_fwd && a_egress == gi),
            .s_ready(eg_s_ready[gi]),
            .s_len(a_len),
            .s_tag(1'b0),
            .m_valid(eg_m_valid[gi]),
            .m_drop(eg_m_drop[gi]),
            .m_cause(eg_m_cause[gi*2 +: 2]),
            .m_qlen(eg_m_qlen[gi*QLEN_WIDTH +: QLEN_WIDTH]),
            .m_avg(eg_m_avg[gi*32 +: 32]),
            .m_tag(unused_tag),
            .release_pkt(eg_release[gi]),
            .stat_qlen(eg_stat_qlen[gi*QLEN_WIDTH +: QLEN_WIDTH]),
            .stat_avg(eg_stat_avg[gi*32 +: 32]),
            .stat_count(eg_stat_count[gi*32 +: 32]),
            .stat_rng(eg_stat_rng[gi*32 +: 32])
        );
    end
endgenerate

// delay line over the admission latency
reg [ADMIT_LATENCY-1:0] da_valid_reg;
reg [VF_WIDTH-1:0] da_data_reg [0:ADMIT_LATENCY-1];

always @(posedge clk) begin
    da_valid_reg <= {da_valid_reg[ADMIT_LATENCY-2:0], vf_pop};
    da_data_reg[0] <= vf_head;
    for (i = 1; i < ADMIT_LATENCY; i = i + 1) begin
        da_data_reg[i] <= da_data_reg[i-1];
    end
    if (rst) begin
        da_valid_reg <= {ADMIT_LATENCY{1'b0}};
    end
end

wire b_valid = da_valid_reg[ADMIT_LATENCY-1];
wire [VF_WIDTH-1:0] b_entry = da_data_reg[ADMIT_LATENCY-1];
wire [PORT_WIDTH-1:0] b_in_port = b_entry[VF_WIDTH-1 -: PORT_WIDTH];
wire [2:0] b_cause = b_entry[VF_WIDTH-PORT_WIDTH-1 -: 3];
wire [PORT_WIDTH-1:0] b_egress = b_entry[VF_WIDTH-PORT_WIDTH-4 -: PORT_WIDTH];
wire [47:0] b_nh_mac = b_entry[DESC_WIDTH +: 48];
wire [DESC_WIDTH-1:0] b_desc = b_entry[DESC_WIDTH-1:0];
wire [15:0] b_len = b_desc[DESC_WIDTH-6 -: 16];
wire [7:0] b_ttl = b_desc[DESC_WIDTH-22 -: 8];
wire [15:0] b_csum = b_desc[DESC_WIDTH-30 -: 16];
wire [31:0] b_src = b_desc[DESC_WIDTH-46 -: 32];
wire [31:0] b_dst = b_desc[DESC_WIDTH-78 -: 32];
wire b_rbcc = b_desc[DESC_WIDTH-110];
wire [6:0] b_rbcc_off = b_desc[DESC_WIDTH-111 -: 7];
wire b_fin = b_desc[96];
wire [31:0] b_rate = b_desc[64 +: 32];
wire [31:0] b_rbn = b_desc[32 +: 32];
wire [31:0] b_cur = b_desc[0 +: 32];

wire b_fwd_in = (b_cause == CAUSE_FWD);
wire b_adm_drop = b_fwd_in && eg_m_drop[b_egress];
wire [1:0] b_adm_cause = eg_m_cause[b_egress*2 +: 2];
wire b_fwd = b_fwd_in && !b_adm_drop;

/*
 * RBCC for admitted RBCC packets
 */
wire r_valid, r_stamp;
wire [31:0] r_share;
// Waiver: the outcome is counted by rbcc_unit itself; port and tag come from
// the delay line
/* verilator lint_off UNUSEDSIGNAL */
wire [1:0] r_outcome;
wire [PORT_WIDTH-1:0] r_port;
wire r_tag;
/* verilator lint_on UNUSEDSIGNAL */
wire [PORTS-1:0] rc_packets, rc_hits, rc_updates, rc_inserts, rc_collisions;
wire [PORTS*2-1:0] rc_removals;

rbcc_unit #(
    .PORTS(PORTS),
    .PORT_WIDTH(PORT_WIDTH),
    .SLOTS(ABT_SLOTS),
    .TAG_WIDTH(1)
)
rbcc_inst (
    .clk(clk),
    .rst(rst),
    .cfg_router_id(router_id_reg),
    .cfg_idle_timeout_us(idle_timeout_reg),
    .cfg_min_rate(min_rate_reg),
    .cfg_capacity(capacity_reg),
    .cfg_clear(abt_clear_reg),
    .recip_wr_en(recip_wr_en_reg),
    .recip_wr_addr(recip_wr_addr_reg),
    .recip_wr_data(recip_reg),
    .s_valid(b_valid && b_fwd && b_rbcc),
    .s_ready(rbcc_ready),
    .s_port(b_egress),
    .s_port_id(port_id_reg[b_egress*16 +: 16]),
    .s_src(b_src),
    .s_dst(b_dst),
    .s_fin(b_fin),
    .s_rate(b_rate),
    .s_return_bottle_node(b_rbn),
    .s_current_rate(b_cur),
    .s_now_us(now_us_reg),
    .s_tag(1'b0),
    .m_valid(r_valid),
    .m_stamp(r_stamp),
    .m_share(r_share),
    .m_outcome(r_outcome),
    .m_port(r_port),
    .m_tag(r_tag),
    .cnt_packets(rc_packets),
    .cnt_hits(rc_hits),
    .cnt_updates(rc_updates),
    .cnt_inserts(rc_inserts),
    .cnt_removals(rc_removals),
    .cnt_collisions(rc_collisions),
    .stat_n(agg_n),
    .stat_n_limited(agg_nl),
    .stat_sum_limited(agg_sum)
);

// result: {drop, egress, nh_mac, ttl, csum, rbcc, off, rate}
localparam RES_WIDTH = 1 + PORT_WIDTH + 48 + 8 + 16 + 1 + 7 + 32;

reg [RBCC_LATENCY-1:0] dr_valid_reg;
reg [RES_WIDTH-1:0] dr_data_reg [0:RBCC_LATENCY-1];
reg [PORT_WIDTH-1:0] dr_port_reg [0:RBCC_LATENCY-1];

always @(posedge clk) begin
    dr_valid_reg <= {dr_valid_reg[RBCC_LATENCY-2:0], b_valid};
    dr_data_reg[0] <= {!b_fwd, b_egress, b_nh_mac, b_ttl, b_csum, b_fwd && b_rbcc, b_rbcc_off,
        b_rate};
    dr_port_reg[0] <= b_in_port;
    for (i = 1; i < RBCC_LATENCY; i = i + 1) begin
        dr_data_reg[i] <= dr_data_reg[i-1];
        dr_port_reg[i] <= dr_port_reg[i-1];
    end
    if (rst) begin
        dr_valid_reg <= {RBCC_LATENCY{1'b0}};
    end
end

wire f_valid = dr_valid_reg[RBCC_LATENCY-1];
wire [RES_WIDTH-1:0] f_data = dr_data_reg[RBCC_LATENCY-1];
wire [PORT_WIDTH-1:0] f_in_port = dr_port_reg[RBCC_LATENCY-1];
wire f_rbcc = f_data[39];
// stamped rate: the share if RBCC lowered it (r_* line up with f_* by latency)
wire f_stamp = f_rbcc && r_valid && r_stamp;
wire [RES_WIDTH-1:0] f_result = {f_data[RES_WIDTH-1:40], f_stamp, f_data[38:32],
    f_stamp ? r_share : f_data[31:0]};

/*
 * Per ingress port: result FIFO, rewrite, and the way to the egress ports
 */
wire [PORTS*DATA_WIDTH-1:0] rw_tdata;
wire [PORTS*KEEP_WIDTH-1:0] rw_tkeep;
wire [PORTS-1:0] rw_tvalid, rw_tlast;
wire [PORTS*USER_WIDTH-1:0] rw_tuser;
wire [PORTS*PORT_WIDTH-1:0] rw_tdest;
wire [PORTS-1:0] rw_tready;
// per egress: ready towards each ingress
wire [PORTS*PORTS-1:0] arb_s_tready;

generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_out_in
        wire [RES_WIDTH-1:0] res;
        wire res_valid;

        // Waiver: credits keep the result FIFO from overflowing
        /* verilator lint_off UNUSEDSIGNAL */
        wire res_s_ready;
        wire [clog2(RES_DEPTH):0] res_count;
        /* verilator lint_on UNUSEDSIGNAL */

        fifo_fwft #(
            .WIDTH(RES_WIDTH),
            .DEPTH(RES_DEPTH)
        )
        res_fifo_inst (
            .clk(clk),
            .rst(rst),
            .s_data(f_result),
            .s_valid(f_valid && f_in_port == gi),
            .s_ready(res_s_ready),
            .m_data(res),
            .m_valid(res_valid),
            .m_ready(res_pop[gi]),
            .count(res_count)
        );

        wire [PORT_WIDTH-1:0] res_egress = res[RES_WIDTH-2 -: PORT_WIDTH];

        frame_rewrite #(
            .DATA_WIDTH(DATA_WIDTH),
            .KEEP_WIDTH(KEEP_WIDTH),
            .USER_WIDTH(USER_WIDTH),
            .DEST_WIDTH(PORT_WIDTH)
        )
        rewrite_inst (
            .clk(clk),
            .rst(rst),
            .s_hdr_valid(res_valid),
            .s_hdr_ready(res_pop[gi]),
            .s_hdr_drop(res[RES_WIDTH-1]),
            .s_hdr_dest(res_egress),
            .s_hdr_dst_mac(res[RES_WIDTH-PORT_WIDTH-2 -: 48]),
            .s_hdr_src_mac(port_mac_reg[res_egress*48 +: 48]),
            .s_hdr_ttl(res[63:56]),
            .s_hdr_csum(res[55:40]),
            .s_hdr_stamp(res[39]),
            .s_hdr_rbcc_offset(res[38:32]),
            .s_hdr_rate(res[31:0]),
            .s_hdr_bottle_node(router_id_reg),
            .s_axis_tdata(iq_tdata[gi*DATA_WIDTH +: DATA_WIDTH]),
            .s_axis_tkeep(iq_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH]),
            .s_axis_tvalid(iq_tvalid[gi]),
            .s_axis_tready(iq_tready[gi]),
            .s_axis_tlast(iq_tlast[gi]),
            .s_axis_tuser(iq_tuser[gi*USER_WIDTH +: USER_WIDTH]),
            .m_axis_tdata(rw_tdata[gi*DATA_WIDTH +: DATA_WIDTH]),
            .m_axis_tkeep(rw_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH]),
            .m_axis_tvalid(rw_tvalid[gi]),
            .m_axis_tready(rw_tready[gi]),
            .m_axis_tlast(rw_tlast[gi]),
            .m_axis_tuser(rw_tuser[gi*USER_WIDTH +: USER_WIDTH]),
            .m_axis_tdest(rw_tdest[gi*PORT_WIDTH +: PORT_WIDTH])
        );

        wire [PORT_WIDTH-1:0] dest = rw_tdest[gi*PORT_WIDTH +: PORT_WIDTH];
        assign rw_tready[gi] = arb_s_tready[dest*PORTS + gi];
    end
endgenerate

/*
 * Per egress port: arbiter, queue, shaper
 */
generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_out
        wire [PORTS-1:0] req;
        genvar gj;
        for (gj = 0; gj < PORTS; gj = gj + 1) begin : g_req
            assign req[gj] = rw_tvalid[gj] && rw_tdest[gj*PORT_WIDTH +: PORT_WIDTH] == gi;
        end

        wire [DATA_WIDTH-1:0] a_tdata;
        wire [KEEP_WIDTH-1:0] a_tkeep;
        wire a_tvalid, a_tready, a_tlast;
        wire [USER_WIDTH-1:0] a_tuser;

        frame_arbiter #(
            .PORTS(PORTS),
            .DATA_WIDTH(DATA_WIDTH),
            .KEEP_WIDTH(KEEP_WIDTH),
            .USER_WIDTH(USER_WIDTH)
        )
        arb_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_tdata(rw_tdata),
            .s_axis_tkeep(rw_tkeep),
            .s_axis_tvalid(req),
            .s_axis_tready(arb_s_tready[gi*PORTS +: PORTS]),
            .s_axis_tlast(rw_tlast),
            .s_axis_tuser(rw_tuser),
            .m_axis_tdata(a_tdata),
            .m_axis_tkeep(a_tkeep),
            .m_axis_tvalid(a_tvalid),
            .m_axis_tready(a_tready),
            .m_axis_tlast(a_tlast),
            .m_axis_tuser(a_tuser)
        );

        wire [DATA_WIDTH-1:0] q_tdata;
        wire [KEEP_WIDTH-1:0] q_tkeep;
        wire q_tvalid, q_tready, q_tlast;
        wire [USER_WIDTH-1:0] q_tuser;

        // Waiver: the egress queue's own count is not used; admission keeps
        // the model's queue length (egress_admit)
        /* verilator lint_off UNUSEDSIGNAL */
        wire [QLEN_WIDTH-1:0] unused_qlen;
        wire unused_sop, unused_empty;
        wire [clog2(OUT_FIFO_DEPTH):0] unused_beats;
        /* verilator lint_on UNUSEDSIGNAL */

        pkt_queue #(
            .DATA_WIDTH(DATA_WIDTH),
            .KEEP_WIDTH(KEEP_WIDTH),
            .USER_WIDTH(USER_WIDTH),
            .DEPTH(OUT_FIFO_DEPTH),
            .QLEN_WIDTH(QLEN_WIDTH)
        )
        out_q_inst (
            .clk(clk),
            .rst(rst),
            .s_axis_tdata(a_tdata),
            .s_axis_tkeep(a_tkeep),
            .s_axis_tvalid(a_tvalid),
            .s_axis_tready(a_tready),
            .s_axis_tlast(a_tlast),
            .s_axis_tuser(a_tuser),
            .m_axis_tdata(q_tdata),
            .m_axis_tkeep(q_tkeep),
            .m_axis_tvalid(q_tvalid),
            .m_axis_tready(q_tready),
            .m_axis_tlast(q_tlast),
            .m_axis_tuser(q_tuser),
            .admit(1'b0),
            .qlen(unused_qlen),
            .m_sop(unused_sop),
            .went_empty(unused_empty),
            .status_beats(unused_beats)
        );

        // shaper: a frame may start once its admission released it
        reg [QLEN_WIDTH:0] credit_reg;
        reg mid_reg;
        wire go = mid_reg || credit_reg != {QLEN_WIDTH+1{1'b0}};
        wire beat = q_tvalid && q_tready;
        wire sof = beat && !mid_reg;

        always @(posedge clk) begin
            credit_reg <= credit_reg + {{QLEN_WIDTH{1'b0}}, eg_release[gi]}
                - {{QLEN_WIDTH{1'b0}}, sof};
            if (beat) begin
                mid_reg <= !q_tlast;
            end
            if (rst) begin
                credit_reg <= {QLEN_WIDTH+1{1'b0}};
                mid_reg <= 1'b0;
            end
        end

        assign q_tready = m_axis_tready[gi] && go;
        assign m_axis_tdata[gi*DATA_WIDTH +: DATA_WIDTH] = q_tdata;
        assign m_axis_tkeep[gi*KEEP_WIDTH +: KEEP_WIDTH] = q_tkeep;
        assign m_axis_tvalid[gi] = q_tvalid && go;
        assign m_axis_tlast[gi] = q_tlast;
        assign m_axis_tuser[gi*USER_WIDTH +: USER_WIDTH] = q_tuser;
    end
endgenerate

/*
 * Counters
 *
 * index: 0 packets_in, 1 drop_not_ipv4, 2 drop_malformed, 3 drop_bad_checksum,
 * 4 drop_ttl_expired, 5 drop_no_route, 6 drop_rx_error, 7 packets_out,
 * 8 bytes_out, 9 drop_queue_full, 10 drop_red_early, 11 drop_red_forced,
 * 12 rbcc_packets, 13 abt_hits, 14 abt_updates, 15 abt_inserts,
 * 16 abt_removals, 17 abt_collisions
 */
always @* begin
    cnt_inc = {PORTS*COUNTERS*16{1'b0}};
    for (i = 0; i < PORTS; i = i + 1) begin
        // ingress side, when the verdict leaves for admission
        if (vf_pop && a_in_port == i[PORT_WIDTH-1:0]) begin
            cnt_inc[(i*COUNTERS+0)*16 +: 16] = 16'd1;
            case (a_cause)
                CAUSE_NOT_IPV4: cnt_inc[(i*COUNTERS+1)*16 +: 16] = 16'd1;
                CAUSE_MALFORMED: cnt_inc[(i*COUNTERS+2)*16 +: 16] = 16'd1;
                CAUSE_BAD_CHECKSUM: cnt_inc[(i*COUNTERS+3)*16 +: 16] = 16'd1;
                CAUSE_TTL_EXPIRED: cnt_inc[(i*COUNTERS+4)*16 +: 16] = 16'd1;
                CAUSE_NO_ROUTE: cnt_inc[(i*COUNTERS+5)*16 +: 16] = 16'd1;
                CAUSE_RX_ERROR: cnt_inc[(i*COUNTERS+6)*16 +: 16] = 16'd1;
                default: ;
            endcase
        end
        // egress side, at the admission result
        if (b_valid && b_fwd_in && b_egress == i[PORT_WIDTH-1:0]) begin
            if (b_fwd) begin
                cnt_inc[(i*COUNTERS+7)*16 +: 16] = 16'd1;
                cnt_inc[(i*COUNTERS+8)*16 +: 16] = b_len;
            end else begin
                case (b_adm_cause)
                    2'd1: cnt_inc[(i*COUNTERS+9)*16 +: 16] = 16'd1;
                    2'd2: cnt_inc[(i*COUNTERS+10)*16 +: 16] = 16'd1;
                    default: cnt_inc[(i*COUNTERS+11)*16 +: 16] = 16'd1;
                endcase
            end
        end
        cnt_inc[(i*COUNTERS+12)*16 +: 16] = {15'd0, rc_packets[i]};
        cnt_inc[(i*COUNTERS+13)*16 +: 16] = {15'd0, rc_hits[i]};
        cnt_inc[(i*COUNTERS+14)*16 +: 16] = {15'd0, rc_updates[i]};
        cnt_inc[(i*COUNTERS+15)*16 +: 16] = {15'd0, rc_inserts[i]};
        cnt_inc[(i*COUNTERS+16)*16 +: 16] = {14'd0, rc_removals[i*2 +: 2]};
        cnt_inc[(i*COUNTERS+17)*16 +: 16] = {15'd0, rc_collisions[i]};
    end
end

always @(posedge clk) begin
    for (i = 0; i < PORTS; i = i + 1) begin
        if (b_valid && b_fwd_in && b_egress == i[PORT_WIDTH-1:0]) begin
            last_q_reg[i*QLEN_WIDTH +: QLEN_WIDTH] <= eg_m_qlen[i*QLEN_WIDTH +: QLEN_WIDTH];
            last_avg_reg[i*32 +: 32] <= eg_m_avg[i*32 +: 32];
        end
    end
    if (rst || cnt_clear_reg) begin
        last_q_reg <= {PORTS*QLEN_WIDTH{1'b0}};
        last_avg_reg <= {PORTS*32{1'b0}};
    end
end

/*
 * Register interface
 */
wire [AXIL_ADDR_WIDTH-1:0] reg_wr_addr, reg_rd_addr;
wire [31:0] reg_wr_data;
wire [3:0] reg_wr_strb;
wire reg_wr_en, reg_rd_en;
reg reg_rd_ack_reg;
reg [31:0] reg_rd_data;

axil_reg_if #(
    .DATA_WIDTH(32),
    .ADDR_WIDTH(AXIL_ADDR_WIDTH)
)
axil_reg_if_inst (
    .clk(clk),
    .rst(rst),
    .s_axil_awaddr(s_axil_awaddr),
    .s_axil_awprot(s_axil_awprot),
    .s_axil_awvalid(s_axil_awvalid),
    .s_axil_awready(s_axil_awready),
    .s_axil_wdata(s_axil_wdata),
    .s_axil_wstrb(s_axil_wstrb),
    .s_axil_wvalid(s_axil_wvalid),
    .s_axil_wready(s_axil_wready),
    .s_axil_bresp(s_axil_bresp),
    .s_axil_bvalid(s_axil_bvalid),
    .s_axil_bready(s_axil_bready),
    .s_axil_araddr(s_axil_araddr),
    .s_axil_arprot(s_axil_arprot),
    .s_axil_arvalid(s_axil_arvalid),
    .s_axil_arready(s_axil_arready),
    .s_axil_rdata(s_axil_rdata),
    .s_axil_rresp(s_axil_rresp),
    .s_axil_rvalid(s_axil_rvalid),
    .s_axil_rready(s_axil_rready),
    .reg_wr_addr(reg_wr_addr),
    .reg_wr_data(reg_wr_data),
    .reg_wr_strb(reg_wr_strb),
    .reg_wr_en(reg_wr_en),
    .reg_wr_ack(1'b1),
    .reg_rd_addr(reg_rd_addr),
    .reg_rd_en(reg_rd_en),
    .reg_rd_data(reg_rd_data),
    .reg_rd_ack(reg_rd_ack_reg)
);

// Waiver: registers are written as whole words (strobes ignored)
/* verilator lint_off UNUSEDSIGNAL */
wire [3:0] unused_strb = reg_wr_strb;
/* verilator lint_on UNUSEDSIGNAL */

// global block at 0x0000, port p at 0x1000 + p * 0x200
wire wr_global = reg_wr_addr[AXIL_ADDR_WIDTH-1:12] == 0;
wire [AXIL_ADDR_WIDTH-10:0] wr_port_sel = reg_wr_addr[AXIL_ADDR_WIDTH-1:9] - 8;
wire [8:0] wr_off = reg_wr_addr[8:0];
wire [11:0] wr_goff = reg_wr_addr[11:0];

always @(posedge clk) begin
    lpm_wr_en_reg <= 1'b0;
    nh_wr_en_reg <= 1'b0;
    recip_wr_en_reg <= 1'b0;
    abt_clear_reg <= 1'b0;
    cnt_clear_reg <= 1'b0;
    seed_load_reg <= {PORTS{1'b0}};
    decay_wr_reg <= {PORTS{1'b0}};

    // time
    if (!time_freeze_reg) begin
        if (prescale_reg == CLK_PER_US[15:0] - 1'b1) begin
            prescale_reg <= 16'd0;
            now_us_reg <= now_us_reg + 1'b1;
        end else begin
            prescale_reg <= prescale_reg + 1'b1;
        end
    end

    if (reg_wr_en) begin
        if (wr_global) begin
            case (wr_goff)
                12'h010: begin
                    time_freeze_reg <= reg_wr_data[0];
                    cnt_clear_reg <= reg_wr_data[1];
                    abt_clear_reg <= reg_wr_data[2];
                end
                12'h018: time_lo_reg <= reg_wr_data;
                12'h01c: begin
                    now_us_reg <= {reg_wr_data[15:0], time_lo_reg};
                    prescale_reg <= 16'd0;
                end
                12'h020: router_id_reg <= reg_wr_data;
                12'h024: idle_timeout_reg <= reg_wr_data;
                12'h028: min_rate_reg <= reg_wr_data;
                12'h040: lpm_prefix_reg <= reg_wr_data;
                12'h044: lpm_mask_reg <= reg_wr_data;
                12'h048: lpm_nh_reg <= reg_wr_data[NH_WIDTH-1:0];
                12'h04c: begin
                    lpm_wr_en_reg <= 1'b1;
                    lpm_wr_valid_reg <= reg_wr_data[31];
                    lpm_wr_addr_reg <= reg_wr_data[LPM_ADDR_WIDTH-1:0];
                end
                12'h050: nh_mac_reg[47:32] <= reg_wr_data[15:0];
                12'h054: nh_mac_reg[31:0] <= reg_wr_data;
                12'h058: nh_port_reg <= reg_wr_data[PORT_WIDTH-1:0];
                12'h05c: begin
                    nh_wr_en_reg <= 1'b1;
                    nh_wr_addr_reg <= reg_wr_data[NH_WIDTH-1:0];
                end
                12'h060: recip_reg[31:0] <= reg_wr_data;
                12'h064: recip_reg[32] <= reg_wr_data[0];
                12'h068: begin
                    // recip[k] for k = 1..ABT_SLOTS, stored at k - 1
                    recip_wr_en_reg <= 1'b1;
                    recip_wr_addr_reg <= reg_wr_data[SLOT_WIDTH-1:0] - 1'b1;
                end
                default: ;
            endcase
        end else begin
            for (i = 0; i < PORTS; i = i + 1) begin
                if (wr_port_sel == i[AXIL_ADDR_WIDTH-10:0]) begin
                    case (wr_off)
                        9'h000: port_id_reg[i*16 +: 16] <= reg_wr_data[15:0];
                        9'h004: port_mac_reg[i*48+32 +: 16] <= reg_wr_data[15:0];
                        9'h008: port_mac_reg[i*48 +: 32] <= reg_wr_data;
                        9'h00c: red_en_reg[i] <= reg_wr_data[0];
                        9'h010: qlimit_reg[i*QLEN_WIDTH +: QLEN_WIDTH] <= reg_wr_data[15:0];
                        9'h014: rate_reg[i*40 +: 32] <= reg_wr_data;
                        9'h018: rate_reg[i*40+32 +: 8] <= reg_wr_data[7:0];
                        9'h01c: capacity_reg[i*32 +: 32] <= reg_wr_data;
                        9'h020: wq16_reg[i*17 +: 17] <= reg_wr_data[16:0];
                        9'h024: th_min_reg[i*32 +: 32] <= reg_wr_data;
                        9'h028: th_max_reg[i*32 +: 32] <= reg_wr_data;
                        9'h02c: slope_reg[i*33 +: 32] <= reg_wr_data;
                        9'h030: slope_reg[i*33+32] <= reg_wr_data[0];
                        9'h034: s_recip_reg[i*33 +: 32] <= reg_wr_data;
                        9'h038: s_recip_reg[i*33+32] <= reg_wr_data[0];
                        9'h03c: begin
                            seed_reg[i*32 +: 32] <= reg_wr_data;
                            seed_load_reg[i] <= 1'b1;
                        end
                        9'h040: decay_used_reg[i*(DECAY_ADDR_WIDTH+1) +: DECAY_ADDR_WIDTH+1] <=
                            reg_wr_data[DECAY_ADDR_WIDTH:0];
                        9'h044: decay_addr_reg[i*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH] <=
                            reg_wr_data[DECAY_ADDR_WIDTH-1:0];
                        9'h048: begin
                            decay_data_reg <= reg_wr_data[16:0];
                            decay_wr_addr_reg <= decay_addr_reg[i*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH];
                            decay_wr_reg[i] <= 1'b1;
                            decay_addr_reg[i*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH] <=
                                decay_addr_reg[i*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH] + 1'b1;
                        end
                        default: ;
                    endcase
                end
            end
        end
    end

    if (rst) begin
        now_us_reg <= 48'd0;
        prescale_reg <= 16'd0;
        time_freeze_reg <= 1'b0;
        router_id_reg <= 32'd0;
        idle_timeout_reg <= 32'd1000000;
        min_rate_reg <= 32'd1500;
        lpm_wr_en_reg <= 1'b0;
        nh_wr_en_reg <= 1'b0;
        recip_wr_en_reg <= 1'b0;
        abt_clear_reg <= 1'b0;
        cnt_clear_reg <= 1'b0;
        seed_load_reg <= {PORTS{1'b0}};
        decay_wr_reg <= {PORTS{1'b0}};
        for (i = 0; i < PORTS; i = i + 1) begin
            port_id_reg[i*16 +: 16] <= i[15:0];
            red_en_reg[i] <= 1'b0;
            qlimit_reg[i*QLEN_WIDTH +: QLEN_WIDTH] <= 16'd64;
            rate_reg[i*40 +: 40] <= 40'd0;
            capacity_reg[i*32 +: 32] <= 32'd0;
            decay_used_reg[i*(DECAY_ADDR_WIDTH+1) +: DECAY_ADDR_WIDTH+1] <= 0;
            decay_addr_reg[i*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH] <= 0;
        end
    end
end

/*
 * Register reads: one cycle
 */
reg [AXIL_ADDR_WIDTH-1:0] rd_addr_reg;
wire rd_global = rd_addr_reg[AXIL_ADDR_WIDTH-1:12] == 0;
wire [AXIL_ADDR_WIDTH-10:0] rd_port_full = rd_addr_reg[AXIL_ADDR_WIDTH-1:9] - 8;
wire [PORT_WIDTH-1:0] rd_port = rd_port_full[PORT_WIDTH-1:0];
wire rd_port_ok = rd_port_full < PORTS;
wire [8:0] rd_off = rd_addr_reg[8:0];

// counters: port p at +0x100 + 8 * index (low word), +4 (high word)
wire [AXIL_ADDR_WIDTH-10:0] cnt_rd_port_full = reg_rd_addr[AXIL_ADDR_WIDTH-1:9] - 8;
wire [4:0] cnt_rd_index = reg_rd_addr[7:3];
wire [PORTS*64-1:0] cnt_rd_data;

generate
    for (gi = 0; gi < PORTS; gi = gi + 1) begin : g_cnt
        // Waiver: reads are acknowledged by the register logic's own timing
        /* verilator lint_off UNUSEDSIGNAL */
        wire unused_rd_valid;
        /* verilator lint_on UNUSEDSIGNAL */

        stat_counters #(
            .COUNTERS(COUNTERS),
            .WIDTH(64),
            .INC_WIDTH(16)
        )
        cnt_inst (
            .clk(clk),
            .rst(rst),
            .inc(cnt_inc[gi*COUNTERS*16 +: COUNTERS*16]),
            .clear(cnt_clear_reg),
            .rd_en(reg_rd_en && cnt_rd_port_full == gi),
            .rd_index(cnt_rd_index),
            .rd_data(cnt_rd_data[gi*64 +: 64]),
            .rd_valid(unused_rd_valid)
        );
    end
endgenerate

always @* begin
    reg_rd_data = 32'd0;
    if (rd_global) begin
        case (rd_addr_reg[11:0])
            12'h000: reg_rd_data = 32'h524c4142;  // "RLAB"
            12'h004: reg_rd_data = 32'h00010001;  // 1.1: CONFIG2
            12'h008: reg_rd_data = {DECAY_ADDR_WIDTH[7:0], SLOT_WIDTH[7:0], KEEP_WIDTH[7:0], PORTS[7:0]};
            12'h00c: reg_rd_data = {NH_ENTRIES[15:0], LPM_ENTRIES[15:0]};
            12'h010: reg_rd_data = {31'd0, time_freeze_reg};
            12'h014: reg_rd_data = {31'd0, !rbcc_ready};
            12'h018: reg_rd_data = now_us_reg[31:0];
            12'h01c: reg_rd_data = {16'd0, now_us_reg[47:32]};
            12'h020: reg_rd_data = router_id_reg;
            12'h024: reg_rd_data = idle_timeout_reg;
            12'h028: reg_rd_data = min_rate_reg;
            12'h02c: reg_rd_data = CLK_PER_US;
            12'h030: reg_rd_data = {16'd0, PEND_DEPTH[15:0]};  // the driver checks queue limits
            default: reg_rd_data = 32'd0;
        endcase
    end else if (rd_port_ok) begin
        if (rd_off[8]) begin
            reg_rd_data = rd_off[2] ? cnt_rd_data[rd_port*64+32 +: 32] : cnt_rd_data[rd_port*64 +: 32];
        end else begin
            case (rd_off)
                9'h000: reg_rd_data = {16'd0, port_id_reg[rd_port*16 +: 16]};
                9'h004: reg_rd_data = {16'd0, port_mac_reg[rd_port*48+32 +: 16]};
                9'h008: reg_rd_data = port_mac_reg[rd_port*48 +: 32];
                9'h00c: reg_rd_data = {31'd0, red_en_reg[rd_port]};
                9'h010: reg_rd_data = {16'd0, qlimit_reg[rd_port*QLEN_WIDTH +: QLEN_WIDTH]};
                9'h014: reg_rd_data = rate_reg[rd_port*40 +: 32];
                9'h018: reg_rd_data = {24'd0, rate_reg[rd_port*40+32 +: 8]};
                9'h01c: reg_rd_data = capacity_reg[rd_port*32 +: 32];
                9'h020: reg_rd_data = {15'd0, wq16_reg[rd_port*17 +: 17]};
                9'h024: reg_rd_data = th_min_reg[rd_port*32 +: 32];
                9'h028: reg_rd_data = th_max_reg[rd_port*32 +: 32];
                9'h02c: reg_rd_data = slope_reg[rd_port*33 +: 32];
                9'h030: reg_rd_data = {31'd0, slope_reg[rd_port*33+32]};
                9'h034: reg_rd_data = s_recip_reg[rd_port*33 +: 32];
                9'h038: reg_rd_data = {31'd0, s_recip_reg[rd_port*33+32]};
                9'h03c: reg_rd_data = seed_reg[rd_port*32 +: 32];
                9'h040: reg_rd_data = {{31-DECAY_ADDR_WIDTH{1'b0}},
                    decay_used_reg[rd_port*(DECAY_ADDR_WIDTH+1) +: DECAY_ADDR_WIDTH+1]};
                9'h044: reg_rd_data = {{32-DECAY_ADDR_WIDTH{1'b0}},
                    decay_addr_reg[rd_port*DECAY_ADDR_WIDTH +: DECAY_ADDR_WIDTH]};
                9'h050: reg_rd_data = {16'd0, eg_stat_qlen[rd_port*QLEN_WIDTH +: QLEN_WIDTH]};
                9'h054: reg_rd_data = eg_stat_avg[rd_port*32 +: 32];
                9'h058: reg_rd_data = eg_stat_count[rd_port*32 +: 32];
                9'h05c: reg_rd_data = eg_stat_rng[rd_port*32 +: 32];
                9'h060: reg_rd_data = {16'd0, last_q_reg[rd_port*QLEN_WIDTH +: QLEN_WIDTH]};
                9'h064: reg_rd_data = last_avg_reg[rd_port*32 +: 32];
                9'h068: reg_rd_data = {{32-N_WIDTH{1'b0}}, agg_n[rd_port*N_WIDTH +: N_WIDTH]};
                9'h06c: reg_rd_data = {{32-N_WIDTH{1'b0}}, agg_nl[rd_port*N_WIDTH +: N_WIDTH]};
                9'h070: reg_rd_data = agg_sum[rd_port*64 +: 32];
                9'h074: reg_rd_data = agg_sum[rd_port*64+32 +: 32];
                default: reg_rd_data = 32'd0;
            endcase
        end
    end
end

always @(posedge clk) begin
    reg_rd_ack_reg <= reg_rd_en;
    if (reg_rd_en) begin
        rd_addr_reg <= reg_rd_addr;
    end
    if (rst) begin
        reg_rd_ack_reg <= 1'b0;
    end
end

endmodule

`resetall
