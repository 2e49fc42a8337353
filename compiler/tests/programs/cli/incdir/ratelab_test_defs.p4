/* Shared definitions for include_and_define.p4, found through -I. */
#ifndef RATELAB_TEST_DEFS
#define RATELAB_TEST_DEFS

#ifndef TABLE_SIZE
#define TABLE_SIZE 128
#endif

header ethernet_t {
    bit<48> dstAddr;
    bit<48> srcAddr;
    bit<16> etherType;
}

#endif
