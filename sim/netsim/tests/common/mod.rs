//! What the simulator's integration tests share: router.p4 compiled by
//! ratelab-p4c and the router plans of example topologies, made by one
//! Python process (`.venv`'s, or the interpreter `RATELAB_PYTHON` names).

#![allow(dead_code)] // each test binary uses its own part

use std::path::{Path, PathBuf};
use std::process::Command;

pub const MS: u64 = 1_000_000;
pub const S: u64 = 1_000_000_000;

/// The repository's root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python that has the project's packages.
pub fn python() -> PathBuf {
    std::env::var("RATELAB_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|_| repo().join(".venv/bin/python"))
}

/// Empties `out`, compiles router.p4 into it and plans each `(name,
/// topology file, overrides)` into `out/<name>.json`. Returns router.json's
/// text and each plan's text, in the order given.
pub fn compile_and_plan(out: &Path, topologies: &[(&str, &str, &[&str])]) -> (String, Vec<String>) {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).unwrap();
    let script = r#"
import json, sys
sys.path.insert(0, "sim/netsim/tools")
from ratelab_p4c.cli import run
from router_plans import router_plans
out, wanted = sys.argv[1], json.loads(sys.argv[2])
if run(["-o", out, "p4src/router.p4"]) != 0:
    sys.exit("router.p4 did not compile")
for name, path, overrides in wanted:
    with open(f"{out}/{name}.json", "w") as f:
        json.dump(router_plans(path, overrides), f)
"#;
    let wanted = serde_json::to_string(topologies).unwrap();
    let python = python();
    let status = Command::new(&python)
        .current_dir(repo())
        .args(["-c", script])
        .arg(out)
        .arg(wanted)
        .status()
        .unwrap_or_else(|e| panic!("{}: {e} (run `make deps`)", python.display()));
    assert!(
        status.success(),
        "compiling router.p4 or planning the routers failed"
    );
    let read = |n: &str| std::fs::read_to_string(out.join(n)).unwrap();
    let plans = topologies
        .iter()
        .map(|(name, _, _)| read(&format!("{name}.json")))
        .collect();
    (read("router.json"), plans)
}
