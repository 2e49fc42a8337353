// SPDX-License-Identifier: Apache-2.0
`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * AXI-Lite slave to a simple register interface
 *
 * One transaction at a time. A write presents reg_wr_en for one cycle with
 * address, data and strobes, then waits for reg_wr_ack; a read presents
 * reg_rd_en for one cycle, then waits for reg_rd_ack with reg_rd_data. The
 * register side may acknowledge in the same cycle or any later one. Reads
 * take priority over writes when both arrive together. Responses are OKAY.
 */
module axil_reg_if #
(
    // width of the data bus in bits
    parameter DATA_WIDTH = 32,
    // width of the address bus in bits
    parameter ADDR_WIDTH = 20,
    // width of wstrb (one bit per byte)
    parameter STRB_WIDTH = (DATA_WIDTH/8)
)
(
    input  wire                   clk,
    input  wire                   rst,

    /*
     * AXI-Lite slave interface
     */
    input  wire [ADDR_WIDTH-1:0]  s_axil_awaddr,
    // Waiver: the protection bits are accepted and ignored (one access class)
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [2:0]             s_axil_awprot,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire                   s_axil_awvalid,
    output wire                   s_axil_awready,
    input  wire [DATA_WIDTH-1:0]  s_axil_wdata,
    input  wire [STRB_WIDTH-1:0]  s_axil_wstrb,
    input  wire                   s_axil_wvalid,
    output wire                   s_axil_wready,
    output wire [1:0]             s_axil_bresp,
    output wire                   s_axil_bvalid,
    input  wire                   s_axil_bready,
    input  wire [ADDR_WIDTH-1:0]  s_axil_araddr,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [2:0]             s_axil_arprot,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire                   s_axil_arvalid,
    output wire                   s_axil_arready,
    output wire [DATA_WIDTH-1:0]  s_axil_rdata,
    output wire [1:0]             s_axil_rresp,
    output wire                   s_axil_rvalid,
    input  wire                   s_axil_rready,

    /*
     * Register interface
     */
    output wire [ADDR_WIDTH-1:0]  reg_wr_addr,
    output wire [DATA_WIDTH-1:0]  reg_wr_data,
    output wire [STRB_WIDTH-1:0]  reg_wr_strb,
    output wire                   reg_wr_en,
    input  wire                   reg_wr_ack,
    output wire [ADDR_WIDTH-1:0]  reg_rd_addr,
    output wire                   reg_rd_en,
    input  wire [DATA_WIDTH-1:0]  reg_rd_data,
    input  wire                   reg_rd_ack
);

// parameter checks: an impossible parameter set instantiates a module that
// does not exist, named after the problem, which stops elaboration there
// (Verilator, yosys `hierarchy -check`, any Verilog 2001 tool)
generate
    if (STRB_WIDTH * 8 != DATA_WIDTH) begin : check_strb_width
        param_error_STRB_WIDTH_must_be_DATA_WIDTH_over_8 bad();
    end
endgenerate

localparam [2:0]
    STATE_IDLE = 3'd0,
    STATE_WRITE = 3'd1,
    STATE_WRITE_RESP = 3'd2,
    STATE_READ = 3'd3,
    STATE_READ_RESP = 3'd4;

reg [2:0] state_reg, state_next;

reg [ADDR_WIDTH-1:0] addr_reg, addr_next;
reg [DATA_WIDTH-1:0] data_reg, data_next;
reg [STRB_WIDTH-1:0] strb_reg, strb_next;

reg awready_next, wready_next, arready_next;
reg reg_wr_en_reg, reg_wr_en_next;
reg reg_rd_en_reg, reg_rd_en_next;
reg bvalid_reg, bvalid_next;
reg rvalid_reg, rvalid_next;
reg [DATA_WIDTH-1:0] rdata_reg, rdata_next;

always @* begin
    state_next = state_reg;
    addr_next = addr_reg;
    data_next = data_reg;
    strb_next = strb_reg;
    awready_next = 1'b0;
    wready_next = 1'b0;
    arready_next = 1'b0;
    reg_wr_en_next = 1'b0;
    reg_rd_en_next = 1'b0;
    bvalid_next = bvalid_reg && !s_axil_bready;
    rvalid_next = rvalid_reg && !s_axil_rready;
    rdata_next = rdata_reg;

    case (state_reg)
        STATE_IDLE: begin
            if (s_axil_arvalid) begin
                arready_next = 1'b1;
                addr_next = s_axil_araddr;
                reg_rd_en_next = 1'b1;
                state_next = STATE_READ;
            end else if (s_axil_awvalid && s_axil_wvalid) begin
                awready_next = 1'b1;
                wready_next = 1'b1;
                addr_next = s_axil_awaddr;
                data_next = s_axil_wdata;
                strb_next = s_axil_wstrb;
                reg_wr_en_next = 1'b1;
                state_next = STATE_WRITE;
            end
        end
        STATE_WRITE: begin
            if (reg_wr_ack) begin
                bvalid_next = 1'b1;
                state_next = STATE_WRITE_RESP;
            end
        end
        STATE_WRITE_RESP: begin
            if (!bvalid_reg || s_axil_bready) begin
                bvalid_next = 1'b0;
                state_next = STATE_IDLE;
            end
        end
        STATE_READ: begin
            if (reg_rd_ack) begin
                rvalid_next = 1'b1;
                rdata_next = reg_rd_data;
                state_next = STATE_READ_RESP;
            end
        end
        STATE_READ_RESP: begin
            if (!rvalid_reg || s_axil_rready) begin
                rvalid_next = 1'b0;
                state_next = STATE_IDLE;
            end
        end
        default: begin
            state_next = STATE_IDLE;
        end
    endcase
end

reg awready_reg, wready_reg, arready_reg;

always @(posedge clk) begin
    state_reg <= state_next;
    addr_reg <= addr_next;
    data_reg <= data_next;
    strb_reg <= strb_next;
    awready_reg <= awready_next;
    wready_reg <= wready_next;
    arready_reg <= arready_next;
    reg_wr_en_reg <= reg_wr_en_next;
    reg_rd_en_reg <= reg_rd_en_next;
    bvalid_reg <= bvalid_next;
    rvalid_reg <= rvalid_next;
    rdata_reg <= rdata_next;
    if (rst) begin
        state_reg <= STATE_IDLE;
        awready_reg <= 1'b0;
        wready_reg <= 1'b0;
        arready_reg <= 1'b0;
        reg_wr_en_reg <= 1'b0;
        reg_rd_en_reg <= 1'b0;
        bvalid_reg <= 1'b0;
        rvalid_reg <= 1'b0;
    end
end

assign s_axil_awready = awready_reg;
assign s_axil_wready = wready_reg;
assign s_axil_bresp = 2'b00;
assign s_axil_bvalid = bvalid_reg;
assign s_axil_arready = arready_reg;
assign s_axil_rdata = rdata_reg;
assign s_axil_rresp = 2'b00;
assign s_axil_rvalid = rvalid_reg;

assign reg_wr_addr = addr_reg;
assign reg_wr_data = data_reg;
assign reg_wr_strb = strb_reg;
assign reg_wr_en = reg_wr_en_reg;
assign reg_rd_addr = addr_reg;
assign reg_rd_en = reg_rd_en_reg;

endmodule

`resetall
