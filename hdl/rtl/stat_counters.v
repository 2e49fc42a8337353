// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Bank of statistics counters
 *
 * COUNTERS counters of WIDTH bits (wrapping); every counter may be
 * incremented in every cycle, counter i by inc[i*INC_WIDTH +: INC_WIDTH]
 * (0 = no change). clear zeroes them all (an increment in the same cycle is
 * lost). Read: rd_en with rd_index, rd_data is valid the next cycle
 * (rd_valid), and shows the counter before that cycle's increment.
 */
module stat_counters #
(
    // number of counters
    parameter COUNTERS = 8,
    // counter width in bits
    parameter WIDTH = 32,
    // increment width in bits
    parameter INC_WIDTH = 1,
    parameter INDEX_WIDTH = (COUNTERS > 1) ? clog2(COUNTERS) : 1
)
(
    input  wire                          clk,
    input  wire                          rst,

    input  wire [COUNTERS*INC_WIDTH-1:0] inc,
    input  wire                          clear,

    input  wire                          rd_en,
    input  wire [INDEX_WIDTH-1:0]        rd_index,
    output wire [WIDTH-1:0]              rd_data,
    output wire                          rd_valid
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
    if (INC_WIDTH > WIDTH || COUNTERS < 1) begin : check_widths
        param_error_COUNTERS_must_be_at_least_1_and_INC_WIDTH_at_most_WIDTH bad();
    end
endgenerate

reg [WIDTH-1:0] count_reg [0:COUNTERS-1];
reg [WIDTH-1:0] rd_data_reg;
reg rd_valid_reg;

integer i;

always @(posedge clk) begin
    for (i = 0; i < COUNTERS; i = i + 1) begin
        count_reg[i] <= count_reg[i] + {{WIDTH-INC_WIDTH{1'b0}}, inc[i*INC_WIDTH +: INC_WIDTH]};
    end
    rd_valid_reg <= rd_en;
    if (rd_en) begin
        rd_data_reg <= ({{32-INDEX_WIDTH{1'b0}}, rd_index} < COUNTERS) ? count_reg[rd_index] :
            {WIDTH{1'b0}};
    end
    if (rst || clear) begin
        for (i = 0; i < COUNTERS; i = i + 1) begin
            count_reg[i] <= {WIDTH{1'b0}};
        end
    end
    if (rst) begin
        rd_valid_reg <= 1'b0;
    end
end

assign rd_data = rd_data_reg;
assign rd_valid = rd_valid_reg;

endmodule

`resetall
