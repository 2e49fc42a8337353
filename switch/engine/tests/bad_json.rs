//! Malformed programs are refused with the JSON path of the problem.
mod common;
use common::fixture;
use ratelab_engine::{validate, Switch};
use serde_json::{json, Value};

fn base() -> Value {
    serde_json::from_str(&fixture("basic.json")).unwrap()
}

/// Applies `edit` to basic.json and returns the load error text.
fn err(edit: impl FnOnce(&mut Value)) -> String {
    let mut v = base();
    edit(&mut v);
    match Switch::new(&v.to_string(), 1) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn fixtures_validate() {
    for f in ["basic.json", "features.json"] {
        validate(&fixture(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
}

#[test]
fn not_json_or_not_an_object() {
    assert!(validate("{")
        .unwrap_err()
        .to_string()
        .starts_with("not valid JSON"));
    assert_eq!(
        validate("[]").unwrap_err().to_string(),
        "the program must be a JSON object"
    );
}

#[test]
fn errors_name_their_path() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(Edit, &str)> = vec![
        (
            Box::new(|v| v["pipelines"][0]["tables"][0]["key"][0]["match_type"] = json!("foo")),
            "pipelines[0].tables[0].key[0].match_type: unknown match_type \"foo\"",
        ),
        (
            Box::new(|v| v["pipelines"][0]["tables"][0]["key"][0]["target"] = json!(["ipv4", "nope"])),
            "pipelines[0].tables[0].key[0].target: header \"ipv4\" has no field \"nope\"",
        ),
        (
            Box::new(|v| v["headers"][2]["header_type"] = json!("missing_t")),
            "headers[2].header_type: unknown header type \"missing_t\"",
        ),
        (
            Box::new(|v| v["actions"][2]["primitives"][0]["op"] = json!("frobnicate")),
            "actions[2].primitives[0].op: unknown primitive \"frobnicate\"",
        ),
        (
            Box::new(|v| v["actions"][2]["primitives"][3]["parameters"][1]["value"]["op"] = json!("**")),
            "actions[2].primitives[3].parameters[1].value.op: unknown operation \"**\"",
        ),
        (
            Box::new(|v| v["actions"][2]["primitives"][0]["parameters"][1]["value"] = json!(5)),
            "actions[2].primitives[0].parameters[1].value: parameter index 5 out of range (2 in scope)",
        ),
        (
            Box::new(|v| v["parsers"][0]["parse_states"][0]["transitions"][0]["next_state"] = json!("nowhere")),
            "parsers[0].parse_states[0].transitions[0].next_state: unknown parse state \"nowhere\"",
        ),
        (
            Box::new(|v| v["pipelines"][0]["conditionals"][0]["true_next"] = json!("ghost")),
            "pipelines[0].conditionals[0].true_next: unknown table or conditional \"ghost\"",
        ),
        (
            Box::new(|v| {
                v["header_stacks"] = json!([{"name": "st", "id": 0, "header_type": "ethernet_t",
                                             "size": 1, "header_ids": [3, 77]}])
            }),
            "header_stacks[0].header_ids[1]: unknown header id 77",
        ),
        (
            Box::new(|v| v["pipelines"][0]["tables"][0]["default_entry"]["action_id"] = json!(99)),
            "pipelines[0].tables[0].default_entry.action_id: unknown action id 99",
        ),
        (
            Box::new(|v| v["header_types"][2]["fields"][0][1] = json!(0)),
            "header_types[2].fields[0][1]: field width 0 not supported (1..=4096 bits)",
        ),
        (
            Box::new(|v| v["header_types"][3]["fields"][0][1] = json!(5)),
            "headers[3]: header \"ipv4\" is 161 bits wide, not a whole number of bytes",
        ),
        (
            Box::new(|v| v["calculations"][0]["algo"] = json!("md5")),
            "calculations[0].algo: unknown hash algorithm \"md5\"",
        ),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("pipelines");
            }),
            "missing attribute \"pipelines\"",
        ),
        (
            Box::new(|v| v["__meta__"]["version"] = json!([3, 0])),
            "__meta__.version: unsupported BMv2 JSON major version (expected 2)",
        ),
        (
            Box::new(|v| v["checksums"][0]["calculation"] = json!("nocalc")),
            "checksums[0].calculation: unknown calculation \"nocalc\"",
        ),
        (
            Box::new(|v| v["pipelines"][0]["tables"][0]["default_entry"]["action_data"] = json!(["0x1"])),
            "pipelines[0].tables[0].default_entry: action \"MyIngress.drop\" takes 0 parameters, 1 given",
        ),
        (
            Box::new(|v| v["pipelines"][0]["tables"][0]["type"] = json!("indirect")),
            "pipelines[0].tables[0]: missing attribute \"action_profile\"",
        ),
        (
            Box::new(|v| v["headers"][3]["name"] = json!("ethernet")),
            "headers[3]: duplicate name \"ethernet\"",
        ),
        (
            Box::new(|v| v["actions"][2]["primitives"][0]["parameters"] = json!([])),
            "actions[2].primitives[0].parameters: assign takes 2 parameters, got 0",
        ),
        (
            Box::new(|v| v["parsers"][0]["parse_states"][0]["transitions"][0]["value"] = json!("0xzz")),
            "parsers[0].parse_states[0].transitions[0].value: bad hexstr \"0xzz\" (or wider than 128 bits)",
        ),
    ];
    for (edit, want) in cases {
        assert_eq!(err(edit), want);
    }
}

#[test]
fn const_entries_are_checked() {
    let e = err(|v| {
        v["pipelines"][0]["tables"][0]["entries"] = json!([
            {"match_key": [{"match_type": "lpm", "key": "0x0a000000", "prefix_length": 40}],
             "action_entry": {"action_id": 1, "action_data": []}, "priority": 1}
        ]);
    });
    assert!(
        e.contains("entries[0]") && e.contains("prefix length 40 > width 32"),
        "{e}"
    );
    let e = err(|v| {
        v["pipelines"][0]["tables"][0]["entries"] = json!([
            {"match_key": [{"match_type": "exact", "key": "0x0a000000"}],
             "action_entry": {"action_id": 1, "action_data": []}}
        ]);
    });
    assert!(
        e.contains("match_type does not fit the table key (Lpm)"),
        "{e}"
    );
}

#[test]
fn const_entries_load_and_are_immutable() {
    let mut v = base();
    v["pipelines"][0]["tables"][0]["entries"] = json!([
        {"match_key": [{"match_type": "lpm", "key": "0x0a000000", "prefix_length": 8}],
         "action_entry": {"action_id": 2, "action_data": ["0x000000000099", "0x0005"]}, "priority": 1}
    ]);
    let mut sw = Switch::new(&v.to_string(), 1).unwrap();
    let e = sw.table_entries("MyIngress.ipv4_lpm").unwrap();
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].params, vec![0x99, 5]);
    assert!(sw
        .table_add(
            "MyIngress.ipv4_lpm",
            vec![ratelab_engine::MatchValue::Lpm(0, 0)],
            "MyIngress.drop",
            &[],
            0
        )
        .is_err());
    assert!(sw.table_delete("MyIngress.ipv4_lpm", e[0].handle).is_err());
    sw.inject(1, &common::ipv4_packet([10, 1, 1, 1], 9, b""), 0);
    assert_eq!(sw.poll(0)[0].port, 5);
}

/// Removing or retyping any single attribute never panics the loader.
#[test]
fn structural_mutations_never_panic() {
    fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        out.push(path.clone());
        match v {
            Value::Object(m) => {
                for (k, c) in m {
                    path.push(k.clone());
                    walk(c, path, out);
                    path.pop();
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    path.push(i.to_string());
                    walk(c, path, out);
                    path.pop();
                }
            }
            _ => {}
        }
    }
    for name in ["basic.json", "features.json"] {
        let v: Value = serde_json::from_str(&fixture(name)).unwrap();
        let mut paths = Vec::new();
        walk(&v, &mut Vec::new(), &mut paths);
        // About 100 locations spread over the document, each replacement.
        let step = (paths.len() / 100).max(1);
        for p in paths.iter().skip(1).step_by(step) {
            let ptr = format!("/{}", p.join("/"));
            for repl in [json!(null), json!("x"), json!(-1), json!([]), json!({})] {
                let mut m = v.clone();
                *m.pointer_mut(&ptr).unwrap() = repl;
                let _ = validate(&m.to_string());
            }
        }
    }
}
