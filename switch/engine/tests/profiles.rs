//! Action profiles and selectors (indirect / indirect_ws tables).
mod common;
use common::*;
use ratelab_engine::{ControlError, MatchValue, Switch};
use serde_json::{json, Value};

const T: &str = "MyIngress.ipv4_lpm";
const P: &str = "MyIngress.ecmp";

/// basic.json with the route table behind an action selector hashing the
/// IPv4 addresses (crc16).
fn program(selector: bool) -> String {
    let mut v: Value = serde_json::from_str(&fixture("basic.json")).unwrap();
    let mut prof = json!({"name": P, "id": 0, "max_size": 4});
    if selector {
        prof["selector"] = json!({"algo": "crc16", "input": [
            {"type": "field", "value": ["ipv4", "srcAddr"]},
            {"type": "field", "value": ["ipv4", "dstAddr"]}]});
    }
    v["pipelines"][0]["action_profiles"] = json!([prof]);
    let t = &mut v["pipelines"][0]["tables"][0];
    t["type"] = json!(if selector { "indirect_ws" } else { "indirect" });
    t["action_profile"] = json!(P);
    v.to_string()
}

fn pkt(src_last: u8) -> Vec<u8> {
    let mut p = ipv4_packet([10, 0, 0, 1], 64, b"");
    p[29] = src_last;
    // fix the checksum (not needed for forwarding, but keep it valid)
    p[24] = 0;
    p[25] = 0;
    let c = csum(&p[14..34]);
    p[24] = (c >> 8) as u8;
    p[25] = c as u8;
    p
}

#[test]
fn members_groups_and_selection() {
    let mut sw = Switch::new(&program(true), 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(sw.action_profile_names(), vec![P.to_string()]);
    assert!(sw.action_profile_has_selector(P).unwrap());
    let m2 = sw
        .ap_member_add(P, "MyIngress.ipv4_forward", &[0x22, 2])
        .unwrap();
    let m3 = sw
        .ap_member_add(P, "MyIngress.ipv4_forward", &[0x33, 3])
        .unwrap();
    assert_eq!(
        sw.ap_member_get(P, m3).unwrap(),
        ("MyIngress.ipv4_forward".into(), vec![0x33, 3])
    );
    let g = sw.ap_group_create(P).unwrap();
    sw.ap_group_set_members(P, g, &[m2, m3]).unwrap();
    let key = || vec![MatchValue::Lpm(0x0a000000, 8)];
    // direct actions are refused on an indirect table
    assert!(matches!(
        sw.table_add(T, key(), "MyIngress.ipv4_forward", &[1, 1], 0),
        Err(ControlError::InvalidArgument(_))
    ));
    let h = sw.table_add_group(T, key(), g, 0).unwrap();
    assert_eq!(sw.table_entry(T, h).unwrap().group, Some(g));
    // in use: cannot delete
    assert!(sw.ap_member_delete(P, m2).is_err());
    assert!(sw.ap_group_delete(P, g).is_err());
    let mut ports = Vec::new();
    for s in 0..64u8 {
        sw.inject(1, &pkt(s), 0);
        sw.inject(1, &pkt(s), 0);
        let out = sw.poll(0);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].port, out[1].port, "same flow, same member");
        ports.push(out[0].port);
    }
    assert!(ports.contains(&2) && ports.contains(&3), "{ports:?}");
    // one member only: everything goes there
    sw.ap_group_set_members(P, g, &[m3]).unwrap();
    for s in 0..8u8 {
        sw.inject(1, &pkt(s), 0);
    }
    assert!(sw.poll(0).iter().all(|f| f.port == 3));
    // point the entry at a member, then the group can go
    sw.table_modify_member(T, h, m2).unwrap();
    assert_eq!(sw.table_entry(T, h).unwrap().member, Some(m2));
    sw.ap_group_delete(P, g).unwrap();
    sw.inject(1, &pkt(9), 0);
    assert_eq!(sw.poll(0)[0].port, 2);
    sw.table_delete(T, h).unwrap();
    sw.ap_member_delete(P, m2).unwrap();
    assert_eq!(sw.ap_members(P).unwrap(), vec![m3]);
    assert!(sw.ap_member_get(P, m2).is_err());
}

#[test]
fn profile_without_selector() {
    let mut sw = Switch::new(&program(false), 1).unwrap_or_else(|e| panic!("{e}"));
    assert!(!sw.action_profile_has_selector(P).unwrap());
    assert!(sw.ap_group_create(P).is_err());
    let m = sw
        .ap_member_add(P, "MyIngress.ipv4_forward", &[0x44, 4])
        .unwrap();
    assert!(sw.ap_member_add(P, "NoSuchAction", &[]).is_err());
    assert!(sw
        .table_add_group(T, vec![MatchValue::Lpm(0, 0)], 0, 0)
        .is_err());
    sw.table_add_member(T, vec![MatchValue::Lpm(0x0a000000, 8)], m, 0)
        .unwrap();
    sw.inject(1, &pkt(1), 0);
    assert_eq!(sw.poll(0)[0].port, 4);
    // default entry through a member
    sw.table_set_default_member(T, m).unwrap();
    assert_eq!(
        sw.table_get_default(T).unwrap(),
        Some(("MyIngress.ipv4_forward".into(), vec![0x44, 4]))
    );
    sw.inject(1, &ipv4_packet([11, 0, 0, 1], 64, b""), 0);
    assert_eq!(sw.poll(0)[0].port, 4);
    assert!(
        sw.ap_member_delete(P, m).is_err(),
        "used by entry and default"
    );
    sw.table_clear(T).unwrap();
    sw.table_reset_default(T).unwrap();
    sw.ap_member_delete(P, m).unwrap();
    // max_size 4
    for i in 0..4 {
        sw.ap_member_add(P, "MyIngress.drop", &[])
            .unwrap_or_else(|e| panic!("{i}: {e}"));
    }
    assert!(matches!(
        sw.ap_member_add(P, "MyIngress.drop", &[]),
        Err(ControlError::Full(_))
    ));
}

#[test]
fn bad_profile_references() {
    let mut v: Value = serde_json::from_str(&program(false)).unwrap();
    v["pipelines"][0]["tables"][0]["action_profile"] = json!("nope");
    let e = Switch::new(&v.to_string(), 1).err().unwrap().to_string();
    assert_eq!(
        e,
        "pipelines[0].tables[0].action_profile: unknown action profile \"nope\""
    );
    let mut v: Value = serde_json::from_str(&program(false)).unwrap();
    v["pipelines"][0]["tables"][0]["type"] = json!("indirect_ws");
    let e = Switch::new(&v.to_string(), 1).err().unwrap().to_string();
    assert!(e.contains("has no selector"), "{e}");
}
