// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * IPv4 header checks (checksum, TTL) and the forwarded header's new TTL and
 * checksum by RFC 1624 incremental update
 *
 * Two-cycle pipeline, one header per cycle: m_valid follows s_valid two
 * cycles later.
 *
 * Checksum: the ones'-complement sum of the IHL*4 header bytes (options
 * included) must be 0xffff. TTL: a packet is forwarded only with TTL > 1.
 * Update (RFC 1624 eqn. 3): HC' = ~(~HC + ~m + m') with m = {TTL, protocol},
 * m' = {TTL-1, protocol}; for a header whose checksum is correct this equals
 * recomputing the checksum over the rewritten header.
 */
module ipv4_check
(
    input  wire          clk,
    input  wire          rst,

    input  wire          s_valid,
    // IPv4 header, byte i at bits [8*i+7:8*i]; bytes past IHL*4 are ignored
    input  wire [479:0]  s_hdr,
    input  wire [3:0]    s_ihl,

    output wire          m_valid,
    output wire          m_csum_ok,
    output wire          m_ttl_ok,
    output wire [7:0]    m_ttl_new,
    output wire [15:0]   m_csum_new
);

// stage 1: five partial sums of six 16-bit words each (words past IHL*2 are zero)
reg [18:0] part_reg [0:4];
reg [15:0] hc_reg;
reg [7:0] ttl_reg, proto_reg;
reg valid_1_reg;

reg [18:0] part [0:4];
reg [15:0] w;
integer g, j;

always @* begin
    for (g = 0; g < 5; g = g + 1) begin
        part[g] = 19'd0;
        for (j = 0; j < 6; j = j + 1) begin
            // word n = 6*g+j covers header bytes 2n, 2n+1; it exists if 2n < IHL*4
            w = {s_hdr[(2*(6*g+j))*8 +: 8], s_hdr[(2*(6*g+j)+1)*8 +: 8]};
            if ((6*g+j) < {s_ihl, 1'b0}) begin
                part[g] = part[g] + {3'd0, w};
            end
        end
    end
end

always @(posedge clk) begin
    valid_1_reg <= s_valid;
    for (g = 0; g < 5; g = g + 1) begin
        part_reg[g] <= part[g];
    end
    hc_reg <= {s_hdr[10*8 +: 8], s_hdr[11*8 +: 8]};
    ttl_reg <= s_hdr[8*8 +: 8];
    proto_reg <= s_hdr[9*8 +: 8];
    if (rst) begin
        valid_1_reg <= 1'b0;
    end
end

// stage 2: fold the partial sums, check, and the incremental update
function [15:0] fold(input [21:0] x);
    reg [16:0] t;
    begin
        t = {11'd0, x[21:16]} + {1'b0, x[15:0]};
        fold = t[15:0] + {15'd0, t[16]};
    end
endfunction

reg [21:0] total;
reg [15:0] sum16;
reg [7:0] ttl_dec;
reg [17:0] upd_sum;
reg [15:0] upd16;

always @* begin
    total = {3'd0, part_reg[0]} + {3'd0, part_reg[1]} + {3'd0, part_reg[2]} +
            {3'd0, part_reg[3]} + {3'd0, part_reg[4]};
    sum16 = fold(total);
    ttl_dec = ttl_reg - 8'd1;
    upd_sum = {2'd0, ~hc_reg} + {2'd0, ~{ttl_reg, proto_reg}} + {2'd0, ttl_dec, proto_reg};
    upd16 = fold({4'd0, upd_sum});
end

reg valid_2_reg;
reg csum_ok_reg, ttl_ok_reg;
reg [7:0] ttl_new_reg;
reg [15:0] csum_new_reg;

always @(posedge clk) begin
    valid_2_reg <= valid_1_reg;
    csum_ok_reg <= (sum16 == 16'hffff);
    ttl_ok_reg <= (ttl_reg > 8'd1);
    ttl_new_reg <= ttl_dec;
    csum_new_reg <= ~upd16;
    if (rst) begin
        valid_2_reg <= 1'b0;
    end
end

assign m_valid = valid_2_reg;
assign m_csum_ok = csum_ok_reg;
assign m_ttl_ok = ttl_ok_reg;
assign m_ttl_new = ttl_new_reg;
assign m_csum_new = csum_new_reg;

endmodule

`resetall
