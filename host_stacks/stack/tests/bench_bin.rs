//! ratelab-stack-bench runs end to end on a small transfer: its replayed
//! sender must match the recorded run (the binary asserts it), its output is
//! the tab-separated table host_stacks/benchmarks/host_stacks_cpu.py reads,
//! and bad arguments are a one-line error with status 2. No timing is checked.

use std::process::Command;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_ratelab-stack-bench"))
        .args(args)
        .output()
        .expect("the benchmark binary runs")
}

#[test]
fn small_run_prints_the_table() {
    let out = bench(&["3000", "1"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    assert_eq!(lines[0], ["case", "sender_ns", "both_ns", "packets"]);
    let cases: Vec<&str> = lines[1..].iter().map(|l| l[0]).collect();
    assert_eq!(
        cases,
        [
            "newreno, delayed ACKs",
            "newreno, ACK every segment",
            "cubic, delayed ACKs",
            "vegas, delayed ACKs",
            "newreno through the testbed simulator",
        ]
    );
    for (i, l) in lines[1..].iter().enumerate() {
        assert_eq!(l.len(), 4, "{l:?}");
        let simulated = i == 4;
        assert_eq!(
            l[1] == "-",
            simulated,
            "sender measured for direct runs only: {l:?}"
        );
        if !simulated {
            assert!(l[1].parse::<f64>().unwrap() > 0.0, "{l:?}");
        }
        assert!(l[2].parse::<f64>().unwrap() > 0.0, "{l:?}");
        // At least the packets asked for (half through the testbed, which
        // runs in 10 ms steps and overshoots); direct runs stop within a round.
        let packets: u64 = l[3].parse().unwrap();
        if simulated {
            assert!(packets >= 1500, "{l:?}");
        } else {
            assert!((3000..3200).contains(&packets), "{l:?}");
        }
    }
}

#[test]
fn bad_arguments_are_one_line_and_status_2() {
    for args in [&["0"][..], &["x"], &["10", "-1"]] {
        let out = bench(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("must be a positive integer"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}
