// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * xorshift32 pseudo-random generator (x ^= x << 13; x ^= x >> 17; x ^= x << 5)
 *
 * state_out is the current state; on step it advances once and the new state
 * is the draw (the RED unit reads R = the new x). load overrides step.
 * A zero state stays zero forever: the control plane must seed nonzero
 * (the value is taken as is, like the reference model does).
 */
module xorshift32 #
(
    // state after reset
    parameter [31:0] RESET_SEED = 32'h0000_0001
)
(
    input  wire        clk,
    input  wire        rst,

    input  wire        load,
    input  wire [31:0] load_value,
    input  wire        step,

    output wire [31:0] state_out,
    // state after one more step (combinational), for look-ahead users
    output wire [31:0] next_out
);

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (RESET_SEED == 32'd0) begin : check_reset_seed
        param_error_RESET_SEED_must_be_nonzero bad();
    end
endgenerate

reg [31:0] state_reg, state_next;

reg [31:0] t0, t1, t2;

always @* begin
    t0 = state_reg ^ (state_reg << 13);
    t1 = t0 ^ (t0 >> 17);
    t2 = t1 ^ (t1 << 5);

    state_next = state_reg;
    if (load) begin
        state_next = load_value;
    end else if (step) begin
        state_next = t2;
    end
end

always @(posedge clk) begin
    state_reg <= state_next;
    if (rst) begin
        state_reg <= RESET_SEED;
    end
end

assign state_out = state_reg;
assign next_out = t2;

endmodule

`resetall
