// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Longest-prefix match as a priority TCAM of prefix/mask entries
 *
 * Entry i matches key k when valid[i] and (k & mask[i]) == prefix[i]; of the
 * matching entries the lowest index wins, so the control plane installs
 * longer prefixes at lower indices (the register-map driver sorts routes by
 * prefix length). The result is the winning entry's DATA (a next-hop index).
 *
 * Fully pipelined, one lookup per cycle, latency 2 cycles; s_tag travels with
 * the lookup. Entries are written through the wr_* port (one per cycle); a
 * lookup in flight sees the table as it was when it entered.
 */
module lpm_tcam #
(
    // number of entries (routes)
    parameter ENTRIES = 32,
    // width of the data (next-hop index) of an entry
    parameter DATA_WIDTH = 8,
    // width of the tag that travels with a lookup
    parameter TAG_WIDTH = 4,
    parameter ADDR_WIDTH = clog2(ENTRIES)
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * Lookup
     */
    input  wire                   s_valid,
    input  wire [31:0]            s_key,
    input  wire [TAG_WIDTH-1:0]   s_tag,

    output wire                   m_valid,
    output wire                   m_hit,
    output wire [ADDR_WIDTH-1:0]  m_index,
    output wire [DATA_WIDTH-1:0]  m_data,
    output wire [TAG_WIDTH-1:0]   m_tag,

    /*
     * Entry write
     */
    input  wire                   wr_en,
    input  wire [ADDR_WIDTH-1:0]  wr_addr,
    input  wire                   wr_valid,
    input  wire [31:0]            wr_prefix,
    input  wire [31:0]            wr_mask,
    input  wire [DATA_WIDTH-1:0]  wr_data
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
    if (ENTRIES < 2 || (1 << ADDR_WIDTH) < ENTRIES) begin : check_entries
        param_error_ENTRIES_must_be_at_least_2_and_fit_ADDR_WIDTH bad();
    end
endgenerate

reg [ENTRIES-1:0] valid_reg;
reg [31:0] prefix_reg [0:ENTRIES-1];
reg [31:0] mask_reg [0:ENTRIES-1];
reg [DATA_WIDTH-1:0] data_reg [0:ENTRIES-1];

integer i;

always @(posedge clk) begin
    if (wr_en) begin
        valid_reg[wr_addr] <= wr_valid;
        // host bits of the prefix are ignored
        prefix_reg[wr_addr] <= wr_prefix & wr_mask;
        mask_reg[wr_addr] <= wr_mask;
        data_reg[wr_addr] <= wr_data;
    end
    if (rst) begin
        valid_reg <= {ENTRIES{1'b0}};
    end
end

// stage 1: match vector
reg [ENTRIES-1:0] match_reg;
reg valid_1_reg;
reg [TAG_WIDTH-1:0] tag_1_reg;

always @(posedge clk) begin
    for (i = 0; i < ENTRIES; i = i + 1) begin
        match_reg[i] <= valid_reg[i] && ((s_key & mask_reg[i]) == prefix_reg[i]);
    end
    valid_1_reg <= s_valid;
    tag_1_reg <= s_tag;
    if (rst) begin
        valid_1_reg <= 1'b0;
    end
end

// stage 2: priority encoder (lowest index wins) and the entry's data
reg hit;
reg [ADDR_WIDTH-1:0] index;

always @* begin
    hit = 1'b0;
    index = {ADDR_WIDTH{1'b0}};
    for (i = ENTRIES - 1; i >= 0; i = i - 1) begin
        if (match_reg[i]) begin
            hit = 1'b1;
            index = i[ADDR_WIDTH-1:0];
        end
    end
end

reg valid_2_reg, hit_2_reg;
reg [ADDR_WIDTH-1:0] index_2_reg;
reg [DATA_WIDTH-1:0] data_2_reg;
reg [TAG_WIDTH-1:0] tag_2_reg;

always @(posedge clk) begin
    valid_2_reg <= valid_1_reg;
    hit_2_reg <= hit;
    index_2_reg <= index;
    data_2_reg <= data_reg[index];
    tag_2_reg <= tag_1_reg;
    if (rst) begin
        valid_2_reg <= 1'b0;
    end
end

assign m_valid = valid_2_reg;
assign m_hit = hit_2_reg;
assign m_index = index_2_reg;
assign m_data = data_2_reg;
assign m_tag = tag_2_reg;

endmodule

`resetall
