//! `extract_VL` checks its length in BMv2's order: a length that is not
//! whole bytes is ParserInvalidArgument (whatever the packet holds), then a
//! packet too short for it is PacketTooShort, then a length past the
//! header's `max_length` is HeaderTooShort. The compiled parser and the
//! interpreter both.
mod inline;
use inline::*;
use ratelab_engine::Switch;
use serde_json::json;

/// sel {len:8}; var {k:8, data: varbit, at most 32 bits} with `sel.len`
/// bits of data. Ingress writes the parser error into sel.len.
fn program() -> String {
    let vl = json!({"op": "extract_VL", "parameters": [
        {"type": "regular", "value": "var"}, f("sel", "len")]});
    json!({
        "header_types": [
            {"name": "standard_metadata", "id": 0, "fields": sm_fields()},
            {"name": "sel_t", "id": 1, "fields": [["len", 8, false]]},
            {"name": "var_t", "id": 2, "fields": [["k", 8, false], ["data", "*"]], "max_length": 5}
        ],
        "headers": [
            {"name": "standard_metadata", "id": 0, "header_type": "standard_metadata", "metadata": true},
            {"name": "sel", "id": 1, "header_type": "sel_t", "metadata": false},
            {"name": "var", "id": 2, "header_type": "var_t", "metadata": false}
        ],
        "parsers": [{"name": "parser", "id": 0, "init_state": "start", "parse_states": [
            state("start", vec![extract("sel"), vl], vec![], vec![dflt(None)])]}],
        "deparsers": [{"name": "deparser", "id": 0, "order": ["sel", "var"]}],
        "actions": [{"name": "report", "id": 0, "runtime_data": [], "primitives": [
            assign(f("sel", "len"), f("standard_metadata", "parser_error")),
            assign(f("standard_metadata", "egress_spec"), hx(1))]}],
        "pipelines": one_action_pipelines("report")
    })
    .to_string()
}

/// The parser error each way of running gives `input` (compiled, interpreted).
fn parser_error(input: &[u8]) -> (u8, u8) {
    let prog = program();
    let mut compiled = Switch::new(&prog, 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        compiled.compiled_stages().contains(&"parser"),
        "the parser runs compiled: {:?}",
        compiled.compiled_stages()
    );
    let mut reference = Switch::new(&prog, 1).unwrap();
    reference.set_compiled(false);
    let first = |sw: &mut Switch| {
        sw.inject(0, input, 0);
        sw.poll(0).remove(0).data[0]
    };
    (first(&mut compiled), first(&mut reference))
}

const NO_ERROR: u8 = 0;
const PACKET_TOO_SHORT: u8 = 1;
const HEADER_TOO_SHORT: u8 = 4;
const PARSER_INVALID_ARGUMENT: u8 = 6;

#[test]
fn whole_bytes_within_the_header_are_extracted() {
    for input in [&[16u8, 0xaa, 1, 2][..], &[0, 0xaa], &[32, 0xaa, 1, 2, 3, 4]] {
        assert_eq!(parser_error(input), (NO_ERROR, NO_ERROR), "{input:02x?}");
    }
}

#[test]
fn a_length_not_in_whole_bytes_is_parser_invalid_argument() {
    // 12 bits with the bytes there, with too few bytes, and past max_length:
    // the multiple of 8 is checked first.
    for input in [
        &[12u8, 0xaa, 1, 2, 3][..],
        &[12],
        &[255, 0xaa, 1, 2, 3, 4, 5, 6],
        &[1, 0xaa, 1],
    ] {
        let want = PARSER_INVALID_ARGUMENT;
        assert_eq!(parser_error(input), (want, want), "{input:02x?}");
    }
}

#[test]
fn the_packet_length_is_checked_before_max_length() {
    // 40 bits > 32: HeaderTooShort when the packet holds them, else
    // PacketTooShort (BMv2's order).
    let room = [40u8, 0xaa, 1, 2, 3, 4, 5];
    assert_eq!(parser_error(&room), (HEADER_TOO_SHORT, HEADER_TOO_SHORT));
    let short = [40u8, 0xaa, 1];
    assert_eq!(parser_error(&short), (PACKET_TOO_SHORT, PACKET_TOO_SHORT));
    let short = [248u8, 0xaa, 1, 2, 3, 4, 5];
    assert_eq!(parser_error(&short), (PACKET_TOO_SHORT, PACKET_TOO_SHORT));
    let short = [16u8, 0xaa, 1];
    assert_eq!(parser_error(&short), (PACKET_TOO_SHORT, PACKET_TOO_SHORT));
}
