/* ratelab-p4c: P4_16 core library declarations (written from the P4_16
 * language specification's core library signatures). */
#ifndef _CORE_P4_
#define _CORE_P4_

/// Standard error codes; architectures may extend this set.
error {
    NoError,
    PacketTooShort,
    NoMatch,
    StackOutOfBounds,
    HeaderTooShort,
    ParserTimeout,
    ParserInvalidArgument
}

/// Input packet, available to parsers.
extern packet_in {
    /// Extract a fixed-size header.
    void extract<T>(out T hdr);
    /// Extract a header with one varbit field of the given size in bits.
    void extract<T>(out T variableSizeHeader, in bit<32> variableFieldSizeInBits);
    /// Read bits without advancing the cursor.
    T lookahead<T>();
    /// Skip bits.
    void advance(in bit<32> sizeInBits);
    /// Packet length in bytes (not supported on every target).
    bit<32> length();
}

/// Output packet, available to deparsers.
extern packet_out {
    /// Append a header (if valid), a stack or a struct of headers.
    void emit<T>(in T hdr);
}

/// Parser-only: reject the packet with error toSignal when check is false.
extern void verify(in bool check, in error toSignal);

/// The action that does nothing.
@noWarn("unused")
action NoAction() {}

/// Match kinds every architecture understands.
match_kind {
    exact,
    ternary,
    lpm
}

/// Compile-time assertions.
extern bool static_assert(bool check, string message);
extern bool static_assert(bool check);

#endif  /* _CORE_P4_ */
