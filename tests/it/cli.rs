//! The command line as a new user meets it: a seed range says how many seeds it runs, typos
//! get a "did you mean", type errors say what was expected in TOML's words, and a problem
//! under `[expect] allowed` is reported at that key.

use crate::support::{rehearsal, stderr, stdout};

#[test]
fn a_half_open_seed_range_says_how_many_seeds_it_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("c");
    let o = rehearsal(&["compare", "scenarios/examples/bootstrap.toml", "--seeds", "1..3", "--out", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("--seeds 1..3: 2 seed(s), 1 to 2 (A..B leaves B out; write A..=B to run it too)"), "{}", stderr(&o));
}

/// `rehearsal check` on `text`: its stderr, which must be a bad-input refusal.
fn refused(text: &str) -> String {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("s.toml");
    std::fs::write(&file, text).unwrap();
    let o = rehearsal(&["check", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    stderr(&o)
}

#[test]
fn typos_and_wrong_types_are_explained_at_their_own_key() {
    let e = refused("[tasks]\ncount = 1\n[expect]\nviolations = [\"liveness\"]\nallowed = [\"no-false-stales\"]\n");
    assert!(e.contains("s.toml:5:1: key `expect.allowed`: `no-false-stales` is not a rule; did you mean `no-false-stale`?"), "{e}");
    let e = refused("[tasks]\ncount = 1\n[timing]\nbackground_pol_ms = 5000\n");
    assert!(
        e.contains("key `timing.background_pol_ms`: unknown field `background_pol_ms`") && e.contains("did you mean `background_poll_ms`?"),
        "{e}"
    );
    let e = refused("[tasks]\ncount = \"four\"\n");
    assert!(e.contains("key `tasks.count`") && e.contains("expected an integer") && !e.contains("i64"), "{e}");
    let e = refused("[tasks]\ncount = 1\n[protocol]\nvariants = [\"fencng\"]\n");
    assert!(e.contains("unknown variant `fencng`; did you mean `fencing`?"), "{e}");
}
