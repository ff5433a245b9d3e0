//! The bad-input battery (issue 30, item 8): malformed, huge, negative, NaN, devices, FIFOs,
//! binary, unreadable, read-only outputs, schema-changing and never-ending SQL, huge seed
//! ranges and shards, durations near `i64::MAX`, runs that end in an error. Each case asserts
//! the exit code (README.md, "Exit codes"), a fragment of the message, no panic, and bounded
//! time and memory (tests/it/bounded.rs). Fixtures are in tests/bad_input/; the files a case
//! makes (FIFOs, devices' stand-ins, huge files) are made in a temporary folder, `{T}` in its
//! arguments.

use std::path::Path;

use crate::bounded::{rehearsal_in, Ran};
use crate::support::{on_two_threads, root};

/// What a case puts in its temporary folder before it runs.
#[derive(Clone, Copy)]
enum Make {
    Text(&'static str, &'static str),
    /// `name`, `size` bytes of `byte`.
    Filled(&'static str, u8, usize),
    /// Bytes that are not text (a NUL among them).
    Binary(&'static str),
    Fifo(&'static str),
    Folder(&'static str),
    /// `name` pointing at `target`.
    Link(&'static str, &'static str),
    /// A text file no one but root can read.
    Unreadable(&'static str, &'static str),
}

struct Case {
    name: &'static str,
    make: &'static [Make],
    args: &'static [&'static str],
    code: i32,
    expect: &'static [&'static str],
}

const TINY: &str = "tests/bad_input/tiny.toml";

fn make(dir: &Path, what: &Make) {
    match *what {
        Make::Text(name, text) => std::fs::write(dir.join(name), text).unwrap(),
        Make::Filled(name, byte, size) => std::fs::write(dir.join(name), vec![byte; size]).unwrap(),
        Make::Binary(name) => std::fs::write(dir.join(name), (0..=255u8).cycle().take(70_000).collect::<Vec<u8>>()).unwrap(),
        Make::Fifo(name) => {
            let made = std::process::Command::new("mkfifo").arg(dir.join(name)).status().expect("mkfifo runs");
            assert!(made.success(), "mkfifo {name}");
        }
        Make::Folder(name) => std::fs::create_dir_all(dir.join(name)).unwrap(),
        Make::Link(name, target) => std::os::unix::fs::symlink(target, dir.join(name)).unwrap(),
        Make::Unreadable(name, text) => {
            use std::os::unix::fs::PermissionsExt;
            std::fs::write(dir.join(name), text).unwrap();
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o000)).unwrap();
        }
    }
}

/// Root reads any file: a case about an unreadable file means nothing then.
fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn run_case(case: &Case) -> Ran {
    let tmp = tempfile::tempdir().unwrap();
    for what in case.make {
        make(tmp.path(), what);
    }
    let t = tmp.path().display().to_string();
    let args: Vec<String> = case.args.iter().map(|a| a.replace("{T}", &t)).collect();
    let ran = rehearsal_in(&root(), &args);
    let expect: Vec<String> = case.expect.iter().map(|e| e.replace("{T}", &t)).collect();
    let expect: Vec<&str> = expect.iter().map(String::as_str).collect();
    ran.assert(&format!("case `{}`: rehearsal {}", case.name, args.join(" ")), case.code, &expect);
    ran
}

fn run_all(cases: &[Case]) {
    let runnable: Vec<&Case> = cases.iter().filter(|c| !(is_root() && c.make.iter().any(|m| matches!(m, Make::Unreadable(..))))).collect();
    on_two_threads(runnable.len(), |i| {
        run_case(runnable[i]);
    });
}

const NOT_REGULAR: &str = "not a regular file";

/// Scenario files that are not scenario files: every one refused (2) before anything runs.
#[test]
fn scenario_files_that_are_not_scenarios() {
    run_all(&[
        Case {
            name: "/dev/zero",
            make: &[],
            args: &["run", "/dev/zero"],
            code: 2,
            expect: &["/dev/zero: cannot read scenario: a character device, not a regular file"],
        },
        Case {
            name: "/dev/urandom",
            make: &[],
            args: &["run", "/dev/urandom"],
            code: 2,
            expect: &["/dev/urandom: cannot read scenario", NOT_REGULAR],
        },
        Case {
            name: "/dev/null",
            make: &[],
            args: &["check", "/dev/null"],
            code: 2,
            expect: &["/dev/null: cannot read scenario", NOT_REGULAR],
        },
        Case {
            name: "FIFO",
            make: &[Make::Fifo("s.toml")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml: cannot read scenario: a FIFO (named pipe)"],
        },
        Case {
            name: "FIFO to check",
            make: &[Make::Fifo("s.toml")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["a FIFO (named pipe)"],
        },
        Case {
            name: "folder",
            make: &[Make::Folder("d.toml")],
            args: &["run", "{T}/d.toml"],
            code: 2,
            expect: &["{T}/d.toml: cannot read scenario: a folder"],
        },
        Case {
            name: "missing",
            make: &[],
            args: &["run", "{T}/none.toml"],
            code: 2,
            expect: &["{T}/none.toml: cannot read scenario: No such file"],
        },
        Case {
            name: "dangling link",
            make: &[Make::Link("s.toml", "nowhere.toml")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml: cannot read scenario"],
        },
        Case {
            name: "link loop",
            make: &[Make::Link("s.toml", "s.toml")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml: cannot read scenario"],
        },
        Case {
            name: "link to a device",
            make: &[Make::Link("s.toml", "/dev/zero")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["a character device"],
        },
        Case {
            name: "huge (60 MB)",
            make: &[Make::Filled("s.toml", b'#', 60_000_000)],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml: cannot read scenario: 60000000 bytes or more; an input file is at most 4194304 bytes"],
        },
        Case {
            name: "just past the bound",
            make: &[Make::Filled("s.toml", b'#', 4_194_305)],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["4194305 bytes or more"],
        },
        Case { name: "binary", make: &[Make::Binary("s.toml")], args: &["run", "{T}/s.toml"], code: 2, expect: &["{T}/s.toml:"] },
        Case {
            name: "unreadable",
            make: &[Make::Unreadable("s.toml", "[tasks]\ncount = 1\n")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml: cannot read scenario: Permission denied"],
        },
        Case {
            name: "empty",
            make: &[Make::Text("s.toml", "")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:1:1: key `tasks`: missing field `tasks`"],
        },
        Case {
            name: "malformed",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 4\nsteps = = 3\n")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:3:", "key `tasks.steps`"],
        },
        Case {
            name: "deep nesting",
            make: &[Make::Text("s.toml", DEEP)],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:"],
        },
        Case {
            name: "a 3 MB key",
            make: &[Make::Filled("s.toml", b'k', 3_000_000)],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:"],
        },
    ]);
}

/// 200 nested arrays: the TOML reader's depth limit, not the stack, ends it.
const DEEP: &str = "x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]\n";

/// Values out of range: negative, zero, NaN, infinite, near `i64::MAX` — each refused (2) with
/// file:line:col and key, by `check` as by `run`.
#[test]
fn values_out_of_range() {
    run_all(&[
        Case {
            name: "negative duration",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[timing]\nsubagent_ms = -60000\n")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:4:15: key `timing.subagent_ms`", "cannot be negative"],
        },
        Case {
            name: "zero tasks",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 0\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `tasks.count`", "must be positive, got 0"],
        },
        Case {
            name: "10^11 tasks",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 100000000000\n")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["key `tasks.count`: at most 10000 tasks"],
        },
        Case {
            name: "10^11 steps",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\nsteps = 100000000000\n")],
            args: &["run", "{T}/s.toml"],
            code: 2,
            expect: &["key `tasks.steps`: at most 1000 steps"],
        },
        Case {
            name: "NaN probability",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[conductor]\nreject_probability = nan\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:4:", "key `conductor.reject_probability`"],
        },
        Case {
            name: "infinite probability",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[conductor]\nreject_probability = inf\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `conductor.reject_probability`"],
        },
        Case {
            name: "negative probability",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[conductor]\nreject_probability = -0.5\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["between 0 and 1, got -0.5"],
        },
        Case {
            name: "NaN in swarm odds",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[faults]\ncrash_probability = { min = nan, max = 0.2 }\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `faults.crash_probability"],
        },
        Case {
            name: "statement_ms near i64::MAX",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[timing]\nstatement_ms = 9223372036854775000\n")],
            args: &["run", "{T}/s.toml", "--out", "{T}/o"],
            code: 2,
            expect: &["{T}/s.toml:4:16: key `timing.statement_ms`: 9223372036854775000 is out of range"],
        },
        Case {
            name: "launch_delay_ms near i64::MAX, check",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[timing]\nlaunch_delay_ms = 9223372036854775000\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `timing.launch_delay_ms`: 9223372036854775000 is out of range"],
        },
        Case {
            name: "poll_ms near i64::MAX",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[conductor]\npoll_ms = 9223372036854775807\n")],
            args: &["run", "{T}/s.toml", "--out", "{T}/o"],
            code: 2,
            expect: &["key `conductor.poll_ms`: 9223372036854775807 is out of range"],
        },
        Case {
            name: "sim_time_max_ms = i64::MAX",
            make: &[Make::Text("s.toml", "[run]\nsim_time_max_ms = 9223372036854775807\n[tasks]\ncount = 1\n")],
            args: &["run", "{T}/s.toml", "--out", "{T}/o"],
            code: 2,
            expect: &["key `run.sim_time_max_ms`", "out of range"],
        },
        Case {
            name: "uniform max near i64::MAX",
            make: &[Make::Text(
                "s.toml",
                "[tasks]\ncount = 1\n[timing]\nsubagent_ms = { kind = \"uniform\", min = 1, max = 9223372036854775000 }\n",
            )],
            args: &["run", "{T}/s.toml", "--out", "{T}/o"],
            code: 2,
            expect: &["key `timing.subagent_ms.max`"],
        },
        Case {
            name: "crash at i64::MAX",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[[faults.crash]]\ntask = 1\nat_ms = 9223372036854775807\n")],
            args: &["run", "{T}/s.toml", "--out", "{T}/o"],
            code: 2,
            expect: &["key `faults.crash.at_ms`"],
        },
        Case {
            name: "hex i64::MAX",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[timing]\npause_poll_ms = 0x7fffffffffffffff\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `timing.pause_poll_ms`: 9223372036854775807 is out of range"],
        },
        Case {
            name: "past u64",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[timing]\npause_poll_ms = 99999999999999999999\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["{T}/s.toml:4:"],
        },
        Case {
            name: "seconds near i64::MAX",
            make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[conductor]\nstaleness_s = 9223372036854775\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `conductor.staleness_s`"],
        },
        Case {
            name: "a run past year 9999",
            make: &[Make::Text("s.toml", "[run]\nepoch = \"9999-12-31 23:59:59\"\nsim_time_max_ms = 1000\n[tasks]\ncount = 1\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `run.sim_time_max_ms`: the run would end after 9999-12-31 23:59:59"],
        },
        Case {
            name: "zero step budget",
            make: &[Make::Text("s.toml", "[run]\nsql_steps_max = 0\n[tasks]\ncount = 1\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `run.sql_steps_max`: must be positive, got 0"],
        },
        Case {
            name: "negative event cap",
            make: &[Make::Text("s.toml", "[run]\nevents_max = -1\n[tasks]\ncount = 1\n")],
            args: &["check", "{T}/s.toml"],
            code: 2,
            expect: &["key `run.events_max`: must be positive, got -1"],
        },
        Case {
            name: "replay --until i64::MAX",
            make: &[],
            args: &["replay", "{T}/none.toml", "--until", "9223372036854775807"],
            code: 2,
            expect: &["{T}/none.toml: cannot read failure file"],
        },
        Case { name: "--seed past u64", make: &[], args: &["run", TINY, "--seed", "18446744073709551616"], code: 2, expect: &["--seed"] },
        Case { name: "--seed negative", make: &[], args: &["run", TINY, "--seed=-1"], code: 2, expect: &["--seed"] },
    ]);
}

/// Protocol SQL that is not SQL, changes the schema, or never ends. Refused at load (2) naming
/// the entry, or stopped by `run.sql_steps_max` (2) naming it.
#[test]
fn sql_that_is_not_sql_changes_the_schema_or_never_ends() {
    run_all(&[
        Case { name: "--sql /dev/urandom", make: &[], args: &["run", TINY, "--sql", "/dev/urandom", "--out", "{T}/o"], code: 2, expect: &["/dev/urandom: cannot read SQL file: a character device"] },
        Case { name: "--sql FIFO", make: &[Make::Fifo("p.sql")], args: &["run", TINY, "--sql", "{T}/p.sql", "--out", "{T}/o"], code: 2, expect: &["{T}/p.sql: cannot read SQL file: a FIFO"] },
        Case { name: "--sql huge", make: &[Make::Filled("p.sql", b'-', 5_000_000)], args: &["check", "--sql", "{T}/p.sql"], code: 2, expect: &["{T}/p.sql: cannot read SQL file: 5000000 bytes or more"] },
        Case { name: "--sql binary", make: &[Make::Binary("p.sql")], args: &["check", "--sql", "{T}/p.sql"], code: 2, expect: &["{T}/p.sql: a NUL byte"] },
        Case { name: "--sql empty", make: &[Make::Text("p.sql", "\n\n")], args: &["check", "--sql", "{T}/p.sql"], code: 2, expect: &["{T}/p.sql: empty"] },
        Case { name: "scenario's SQL is a device", make: &[Make::Text("s.toml", "[tasks]\ncount = 1\n[protocol]\nsql = \"/dev/zero\"\n")], args: &["run", "{T}/s.toml", "--out", "{T}/o"], code: 2, expect: &["/dev/zero: cannot read SQL file"] },
        Case { name: "scenario's SQL is a FIFO", make: &[Make::Fifo("p.sql"), Make::Text("s.toml", "[tasks]\ncount = 1\n[protocol]\nsql = \"p.sql\"\n")], args: &["check", "{T}/s.toml"], code: 2, expect: &["p.sql: cannot read SQL file: a FIFO"] },
        Case { name: "DROP TABLE", make: &[], args: &["run", TINY, "--sql", "tests/bad_input/drop-table.sql", "--out", "{T}/o"], code: 2, expect: &["statement `heartbeat` (tests/bad_input/drop-table.sql:2) changes the schema or the connection (DROP TABLE orchestration_tasks)"] },
        Case { name: "CREATE TRIGGER", make: &[], args: &["run", TINY, "--sql", "tests/bad_input/add-trigger.sql", "--out", "{T}/o"], code: 2, expect: &["(CREATE TRIGGER t)"] },
        Case { name: "ATTACH", make: &[], args: &["check", TINY, "--sql", "tests/bad_input/attach.sql"], code: 2, expect: &["(ATTACH"] },
        Case { name: "PRAGMA", make: &[], args: &["check", "--sql", "tests/bad_input/pragma.sql"], code: 2, expect: &["(PRAGMA journal_mode = DELETE)"] },
        Case { name: "VACUUM", make: &[], args: &["check", "--sql", "tests/bad_input/vacuum.sql"], code: 2, expect: &["(VACUUM)"] },
        Case { name: "ALTER TABLE", make: &[], args: &["sweep", TINY, "--seeds", "1", "--sql", "tests/bad_input/alter.sql", "--out", "{T}/s"], code: 2, expect: &["(ALTER TABLE orchestration_tasks)"] },
        Case { name: "never-ending read", make: &[], args: &["-q", "run", "tests/bad_input/tiny-steps.toml", "--sql", "tests/bad_input/never-ending-read.sql", "--out", "{T}/o"], code: 2, expect: &["statement `poll_tasks` (tests/bad_input/never-ending-read.sql:2) ran past 200000 SQLite steps (run.sql_steps_max)", "reproduce with: ", " run tests/bad_input/tiny-steps.toml"] },
        Case { name: "never-ending write", make: &[], args: &["-q", "run", "tests/bad_input/tiny-steps.toml", "--sql", "tests/bad_input/never-ending-write.sql", "--out", "{T}/o"], code: 2, expect: &["statement `heartbeat` (tests/bad_input/never-ending-write.sql:2) ran past 200000 SQLite steps"] },
        // Issue 41, cases 7 to 9: refused by `check --sql` and at load, with file:line, or
        // stopped by the run's byte bounds naming the statement.
        Case { name: "BEGIN", make: &[], args: &["check", "--sql", "tests/bad_input/begin.sql"], code: 2, expect: &["statement `heartbeat` (tests/bad_input/begin.sql:2)", "(BEGIN: transaction control)"] },
        Case { name: "BEGIN in a run", make: &[], args: &["run", TINY, "--sql", "tests/bad_input/begin.sql", "--out", "{T}/o"], code: 2, expect: &["(tests/bad_input/begin.sql:2)", "(BEGIN: transaction control)"] },
        Case { name: "load_extension", make: &[], args: &["check", "--sql", "tests/bad_input/load-extension.sql"], code: 2, expect: &["(tests/bad_input/load-extension.sql:2)", "(load_extension(): code from outside the run)"] },
        Case { name: "table-valued pragma", make: &[], args: &["check", "--sql", "tests/bad_input/table-pragma.sql"], code: 2, expect: &["(tests/bad_input/table-pragma.sql:2)", "(pragma_table_info(): a table-valued pragma)"] },
        Case { name: "localtime", make: &[], args: &["run", TINY, "--sql", "tests/bad_input/localtime.sql", "--out", "{T}/o"], code: 2, expect: &["(tests/bad_input/localtime.sql:2)", "'localtime': a time modifier that reads the host's time zone"] },
        Case { name: "800 MB value", make: &[], args: &["-q", "run", TINY, "--sql", "tests/bad_input/huge-value.sql", "--out", "{T}/o"], code: 2, expect: &["statement `heartbeat` (tests/bad_input/huge-value.sql:2) made a string or blob over run.value_bytes_max"] },
        Case { name: "growing database", make: &[], args: &["-q", "run", "tests/bad_input/tiny-bytes.toml", "--sql", "tests/bad_input/growing.sql", "--out", "{T}/o"], code: 2, expect: &["statement `heartbeat` (tests/bad_input/growing.sql:2) grew comms.db past run.db_bytes_max"] },
        Case { name: "never-ending read, default budget", make: &[], args: &["-q", "run", TINY, "--sql", "tests/bad_input/never-ending-read.sql", "--out", "{T}/o"], code: 2, expect: &["ran past 100000000 SQLite steps"] },
    ]);
}

/// Seed ranges, shards, job counts and point lists: huge ones are refused (2) before anything
/// is listed; a shard of a huge range runs its own share in constant memory.
#[test]
fn huge_seed_ranges_shards_and_counts() {
    run_all(&[
        Case { name: "search 10^11 runs", make: &[], args: &["search", TINY, "--runs", "100000000000", "--out", "{T}/s"], code: 2, expect: &["--runs 100000000000 (on each side) makes 200000000000 runs"] },
        Case { name: "bench grid of 22^3 points", make: &[], args: &["bench", TINY, "--param", "timing.background_poll_ms=1000,2000,3000,4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000,17000,18000,19000,20000,21000,22000", "--param", "timing.pause_poll_ms=1000,2000,3000,4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000,17000,18000,19000,20000,21000,22000", "--param", "conductor.poll_ms=1000,2000,3000,4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000,17000,18000,19000,20000,21000,22000", "--seeds", "1", "--out", "{T}/b"], code: 2, expect: &["the --param grid has 10648 points; a bench makes at most 10000"] },
        Case { name: "bench grid times seeds", make: &[], args: &["bench", TINY, "--param", "timing.background_poll_ms=1000,2000,3000,4000,5000,6000,7000,8000,9000,10000,11000,12000,13000,14000,15000,16000,17000,18000,19000,20000,21000,22000", "--seeds", "1..=100000", "--out", "{T}/b"], code: 2, expect: &["the --param grid of 22 point(s) over 100000 seed(s) makes 2200000 runs"] },
        Case { name: "10^10 seeds", make: &[], args: &["sweep", TINY, "--seeds", "1..=10000000000", "--out", "{T}/s"], code: 2, expect: &["--seeds 1..=10000000000 over 1 scenario(s) makes 10000000000 runs; one command makes at most 1000000: split the sweep with --shard I/N, N >= 10000"] },
        Case { name: "every u64 seed", make: &[], args: &["sweep", TINY, "--seeds", "0..=18446744073709551615", "--out", "{T}/s"], code: 2, expect: &["makes 18446744073709551616 runs"] },
        Case { name: "seed past u64", make: &[], args: &["sweep", TINY, "--seeds", "1..=18446744073709551616", "--out", "{T}/s"], code: 2, expect: &["seed range `1..=18446744073709551616`"] },
        Case { name: "negative seeds", make: &[], args: &["sweep", TINY, "--seeds=-5..3", "--out", "{T}/s"], code: 2, expect: &["seed range `-5..3`"] },
        Case { name: "shard too big still", make: &[], args: &["sweep", TINY, "--seeds", "1..=10000000000", "--shard", "1/1000", "--out", "{T}/s"], code: 2, expect: &["in shard 1/1000 makes 10000000 runs"] },
        Case { name: "one pair of 10^8", make: &[], args: &["-q", "sweep", TINY, "--seeds", "1..=100000000", "--shard", "100000000/100000000", "--out", "{T}/s", "--jobs", "1"], code: 0, expect: &[] },
        Case { name: "shard count past the pairs", make: &[], args: &["-q", "sweep", TINY, "--seeds", "7", "--shard", "1/18446744073709551615", "--out", "{T}/s"], code: 0, expect: &[] },
        Case { name: "seed u64::MAX", make: &[], args: &["-q", "run", TINY, "--seed", "18446744073709551615", "--out", "{T}/o"], code: 0, expect: &[] },
        Case { name: "--jobs 0", make: &[], args: &["sweep", TINY, "--seeds", "1", "--jobs", "0", "--out", "{T}/s"], code: 2, expect: &["--jobs must be at least 1"] },
        Case { name: "--jobs huge", make: &[], args: &["-q", "sweep", TINY, "--seeds", "1", "--jobs", "18446744073709551615", "--out", "{T}/s"], code: 0, expect: &[] },
        Case { name: "compare 10^7 seeds", make: &[], args: &["compare", TINY, "--seeds", "1..=10000000", "--out", "{T}/c"], code: 2, expect: &["--seeds 1..=10000000 makes 10000000 runs"] },
        Case { name: "bench 2*10^6 seeds", make: &[], args: &["bench", TINY, "--seeds", "1..=2000000", "--out", "{T}/b"], code: 2, expect: &["--seeds 1..=2000000 makes 2000000 runs"] },
        Case { name: "findings 10^12 seeds", make: &[], args: &["findings", "--seeds", "1..=1000000000000", "--out", "{T}/f.md"], code: 2, expect: &["makes 1000000000000 runs"] },
        Case { name: "explore 5*10^6 points", make: &[], args: &["explore", "crashes", TINY, "--points", "1..=5000000", "--out", "{T}/e"], code: 2, expect: &["--points makes 5000000 runs"] },
    ]);
}

/// Output folders and other inputs of a sweep: refused (2) before any pair runs.
#[test]
fn output_folders_and_sweep_inputs() {
    run_all(&[
        Case {
            name: "--out is a file",
            make: &[Make::Text("f", "x")],
            args: &["run", TINY, "--out", "{T}/f"],
            code: 2,
            expect: &["output folder {T}/f is a file, not a folder"],
        },
        Case {
            name: "--out under a file",
            make: &[Make::Text("f", "x")],
            args: &["run", TINY, "--out", "{T}/f/sub"],
            code: 2,
            expect: &["cannot create output folder {T}/f/sub"],
        },
        Case {
            name: "sweep --out is a file",
            make: &[Make::Text("f", "x")],
            args: &["sweep", TINY, "--seeds", "1", "--out", "{T}/f"],
            code: 2,
            expect: &["is a file, not a folder"],
        },
        Case {
            name: "--scratch missing",
            make: &[],
            args: &["sweep", TINY, "--seeds", "1", "--out", "{T}/s", "--scratch", "{T}/none"],
            code: 2,
            expect: &["not an existing folder"],
        },
        Case {
            name: "--require-coverage device",
            make: &[],
            args: &["sweep", TINY, "--seeds", "1", "--out", "{T}/s", "--require-coverage", "/dev/zero"],
            code: 2,
            expect: &["/dev/zero: cannot read the required coverage: a character device"],
        },
        Case {
            name: "--baseline FIFO",
            make: &[Make::Fifo("b.txt")],
            args: &["sweep", TINY, "--seeds", "1", "--out", "{T}/s", "--baseline", "{T}/b.txt"],
            code: 2,
            expect: &["{T}/b.txt: cannot read baseline file: a FIFO"],
        },
        Case {
            name: "merge of a shard whose manifest is /dev/zero",
            make: &[Make::Folder("shard"), Make::Link("shard/manifest.toml", "/dev/zero")],
            args: &["merge", "{T}/shard", "--out", "{T}/m"],
            code: 2,
            expect: &["{T}/shard/manifest.toml: cannot read manifest: a character device"],
        },
        Case {
            name: "rerun into a killed run's folder",
            make: &[
                Make::Folder("o"),
                Make::Text("o/.rehearsal-owned", "owns comms.db\nowns trace.csv.tmp\n"),
                Make::Text("o/comms.db", "x"),
                Make::Text("o/trace.csv.tmp", "x"),
            ],
            args: &["run", TINY, "--out", "{T}/o"],
            code: 2,
            expect: &["{T}/o already holds a run (comms.db); pass --force"],
        },
        Case {
            name: "new over a FIFO",
            make: &[Make::Fifo("f.toml")],
            args: &["new", "{T}/f.toml", "--force"],
            code: 2,
            expect: &["{T}/f.toml is a FIFO (named pipe), not a regular file: refusing to replace it"],
        },
        Case {
            name: "new over a folder",
            make: &[Make::Folder("d.toml")],
            args: &["new", "{T}/d.toml", "--force"],
            code: 2,
            expect: &["{T}/d.toml is a folder, not a regular file"],
        },
        Case {
            name: "bench over /dev/zero",
            make: &[],
            args: &["bench", "/dev/zero", "--param", "timing.background_poll_ms=5000", "--out", "{T}/b"],
            code: 2,
            expect: &["/dev/zero: cannot read scenario: a character device"],
        },
        Case {
            name: "bench over a FIFO",
            make: &[Make::Fifo("f.toml")],
            args: &["bench", "{T}/f.toml", "--param", "timing.background_poll_ms=5000", "--out", "{T}/b"],
            code: 2,
            expect: &["{T}/f.toml: cannot read scenario: a FIFO"],
        },
        Case {
            name: "bench --param near i64::MAX",
            make: &[],
            args: &["bench", TINY, "--param", "timing.background_poll_ms=9223372036854775000", "--seeds", "1", "--out", "{T}/b"],
            code: 2,
            expect: &["key `timing.background_poll_ms`: 9223372036854775000 is out of range"],
        },
        Case {
            name: "search over a FIFO",
            make: &[Make::Fifo("f.toml")],
            args: &["search", "{T}/f.toml", "--runs", "1", "--out", "{T}/s"],
            code: 2,
            expect: &["a FIFO"],
        },
        Case {
            name: "explore schedules over /dev/urandom",
            make: &[],
            args: &["explore", "schedules", "/dev/urandom", "--out", "{T}/e"],
            code: 2,
            expect: &["/dev/urandom: cannot read scenario"],
        },
        Case {
            name: "replay /dev/zero",
            make: &[],
            args: &["replay", "/dev/zero"],
            code: 2,
            expect: &["/dev/zero: cannot read failure file: a character device"],
        },
        Case { name: "replay FIFO", make: &[Make::Fifo("f.toml")], args: &["replay", "{T}/f.toml"], code: 2, expect: &["a FIFO"] },
        Case {
            name: "replay binary",
            make: &[Make::Binary("f.toml")],
            args: &["replay", "{T}/f.toml"],
            code: 2,
            expect: &["{T}/f.toml: not UTF-8 text"],
        },
        Case {
            name: "replay of a scenario",
            make: &[],
            args: &["replay", TINY],
            code: 2,
            expect: &["tiny.toml: a scenario, not a sweep's failure file: run it with `rehearsal run tests/bad_input/tiny.toml`"],
        },
        Case {
            name: "replay of a TOML that is neither",
            make: &[Make::Text("f.toml", "rule = 3\n")],
            args: &["replay", "{T}/f.toml"],
            code: 2,
            expect: &["{T}/f.toml: not a failure file"],
        },
    ]);
}

/// A read-only output folder is bad input (2) whether it exists or must be created. Root
/// writes into a mode 0555 folder, so as root the case uses a sysfs folder, read-only to all,
/// when there is one.
#[test]
fn a_read_only_output_gives_the_same_code_whether_it_exists_or_not() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let locked = tmp.path().join("ro");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let folder =
        if tempfile::tempfile_in(&locked).is_err() { locked.clone() } else { Path::new("/sys/kernel/software_nodes").to_path_buf() };
    if tempfile::tempfile_in(&folder).is_ok() || !folder.is_dir() {
        eprintln!("skipped: no read-only folder to write into on this machine");
        return;
    }
    let (existing, created) = (folder.display().to_string(), folder.join("new").display().to_string());
    for (command, out) in [("run", &existing), ("run", &created), ("sweep", &existing), ("sweep", &created)] {
        let mut args: Vec<String> = vec![command.into(), TINY.into(), "--out".into(), out.clone()];
        if command == "sweep" {
            args.extend(["--seeds".into(), "1".into()]);
        }
        let ran = rehearsal_in(&root(), &args);
        ran.assert(&format!("{command} --out {out}"), 2, &[&folder.display().to_string()]);
    }
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs that end in an error exit 3 and say how to reproduce it; a sweep that met them and
/// saved them runs them again under `--force`, and `replay` runs them, without a panic.
#[test]
fn runs_that_end_in_an_error_print_their_replay_and_are_never_re_raised() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |rest: &str| format!("{}/{rest}", tmp.path().display());
    let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let cap = "tests/bad_input/event-cap.toml";
    let ran = rehearsal_in(&root(), &args(&["-q", "run", cap, "--out", &t("r")]));
    ran.assert(
        "event cap in run",
        3,
        &["event cap reached: 50 events", &format!("reproduce with: {} run {cap} --seed 1 --out {} --force", bin(), t("r"))],
    );
    let sweep = args(&["-q", "sweep", cap, "--seeds", "1..=2", "--out", &t("s")]);
    rehearsal_in(&root(), &sweep).assert("event cap in a sweep", 3, &[]);
    let results = std::fs::read_to_string(t("s/results.csv")).unwrap();
    assert!(results.contains("event cap reached") && results.contains(&format!("rehearsal run {cap} --seed 2")), "{results}");
    let again = [sweep.clone(), args(&["--force"])].concat();
    rehearsal_in(&root(), &again).assert("sweep --force over saved errors", 3, &["saved failure", "event-cap-default-1.toml"]);
    let failure = t("s/failures/event-cap-default-1.toml");
    let ran = rehearsal_in(&root(), &args(&["replay", &failure, "--out", &t("replayed")]));
    ran.assert("replay of a saved error", 3, &["event cap reached", &format!("reproduce with: {} replay {failure}", bin())]);
    let ran = rehearsal_in(&root(), &args(&["replay", &failure, "--until", "9223372036854775807"]));
    ran.assert("replay --until i64::MAX", 2, &["--until 9223372036854775807: a positive simulated time in ms, at most 10^12"]);
}

/// A sweep whose pairs meet a never-ending statement records them as errors (3), each named.
#[test]
fn a_sweep_over_never_ending_sql_records_each_pair_as_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s").display().to_string();
    let args: Vec<String> = [
        "-q",
        "sweep",
        "tests/bad_input/tiny-steps.toml",
        "--seeds",
        "1..=2",
        "--sql",
        "tests/bad_input/never-ending-read.sql",
        "--out",
        &out,
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    rehearsal_in(&root(), &args).assert("sweep over never-ending SQL", 3, &[]);
    let results = std::fs::read_to_string(tmp.path().join("s/results.csv")).unwrap();
    assert_eq!(
        results.matches("statement `poll_tasks` (tests/bad_input/never-ending-read.sql:2) ran past 200000 SQLite steps").count(),
        2,
        "{results}"
    );
}

/// Two writers into one `--out`: the second must be refused naming the holder (issue 30, item
/// 3, another branch's lock file). Enable when that lands.
#[test]
fn concurrent_writers_into_one_out_the_second_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("s").display().to_string();
    let first =
        crate::support::spawn_rehearsal(&["-q", "sweep", "scenarios/quickstart.toml", "--seeds", "1..=50", "--jobs", "1", "--out", &out]);
    // The first holds the folder once its lock file is there (sim/base/out_lock.rs).
    let lock = std::path::Path::new(&out).join(".rehearsal-lock");
    for _ in 0..600 {
        if lock.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(lock.exists(), "the first sweep took the folder's lock");
    let second: Vec<String> = ["sweep", TINY, "--seeds", "1", "--out", &out, "--force"].iter().map(|a| a.to_string()).collect();
    let ran = rehearsal_in(&root(), &second);
    let mut first = first;
    let _ = first.kill();
    let _ = first.wait();
    ran.assert("a second sweep into a folder in use", 2, &["in use by another rehearsal command"]);
}

/// README.md's exit-code table lists exactly the codes the binary sets: the outcomes', the
/// errors', Ctrl-C's.
#[test]
fn the_readme_s_exit_code_table_lists_the_codes_the_binary_sets() {
    use rehearsal::base::error::Error;
    use rehearsal::vocab::RunOutcome;
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let table = readme.split("## Exit codes").nth(1).expect("README.md has an `Exit codes` section");
    let listed: Vec<i32> = table
        .lines()
        .skip_while(|l| !l.starts_with("| code"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split("**").nth(1).expect("a bold code").parse().expect("a number"))
        .collect();
    let mut set = vec![
        RunOutcome::Pass.exit_code(),
        RunOutcome::Fail.exit_code(),
        Error::input("").exit_code(),
        Error::harness("").exit_code(),
        RunOutcome::Error.exit_code(),
        rehearsal::base::interrupt::EXIT_INTERRUPTED,
    ];
    set.sort_unstable();
    set.dedup();
    assert_eq!(listed, set);
}

/// Issue 41's fifteen cases, each run as the issue describes it and ending as it promises:
/// 1-4 `issue_41_output_folders_keep_every_file_no_rehearsal_command_wrote` (and
/// `issue_41_swarm_and_findings_follow_the_folder_rules` for the commands added since);
/// 5 `issue_41_whole_or_nothing_merged_failures_and_deep_headers` (a merge stopped by an
/// error) and tests/it/kills.rs `a_merge_stopped_at_any_instant_…` (by Ctrl-C and SIGKILL);
/// 6 `issue_41_every_command_into_a_closed_pipe_or_a_full_disk_never_panics`; 7-9 the issue-41
/// cases of `sql_that_is_not_sql_changes_the_schema_or_never_ends`; 10
/// `issue_41_judge_refuses_what_is_not_whole_or_not_the_run_s`; 11, 13, 14
/// `issue_41_whole_or_nothing_merged_failures_and_deep_headers`; 12 (memory flat in the
/// pairs) belongs to the sweep's split (issue 41 item 6) and is measured there, its refusals
/// in `huge_seed_ranges_shards_and_counts`; 15 `runs_that_end_in_an_error_print_their_replay_…`.
/// Case 1-4's rules for `swarm` (its lock, its record, `--out /`) and `findings --out` (a
/// document it did not write).
#[test]
fn issue_41_swarm_and_findings_follow_the_folder_rules() {
    run_all(&[
        Case {
            name: "swarm --out /",
            make: &[],
            args: &["swarm", "--scenarios", "1", "--seeds-per", "1", "--out", "/"],
            code: 2,
            expect: &["refused as an output folder"],
        },
        Case {
            name: "swarm over the user's file",
            make: &[Make::Folder("w"), Make::Text("w/notes.md", "mine")],
            args: &["swarm", "--scenarios", "1", "--seeds-per", "1", "--out", "{T}/w", "--force"],
            code: 2,
            expect: &["w/notes.md", "not rehearsal's to replace"],
        },
        Case {
            name: "swarm into a folder in use",
            make: &[Make::Folder("w"), Make::Text("w/.rehearsal-lock", "pid=1\nstarted=\nhost=HOST\ncommand=rehearsal run\n")],
            args: &["swarm", "--scenarios", "1", "--seeds-per", "1", "--out", "{T}/w"],
            code: 2,
            expect: &["in use by another rehearsal command"],
        },
        Case {
            name: "findings over the user's file",
            make: &[Make::Text("mine.md", "# my notes\n")],
            args: &["findings", "--seeds", "1", "--out", "{T}/mine.md"],
            code: 2,
            expect: &["mine.md: not a document rehearsal findings wrote"],
        },
        Case {
            name: "findings --seed-scripts over a folder",
            make: &[Make::Folder("d.md")],
            args: &["findings", "--seed-scripts", "--out", "{T}/d.md"],
            code: 2,
            expect: &["d.md: not a document rehearsal findings wrote"],
        },
    ]);
}

/// What issue 41 found in output folders (cases 1-4): a command deletes or replaces only what a
/// rehearsal command provably wrote there (its record, `.rehearsal-owned`), `--force` or not;
/// `/`, the home folder and a repository are refused as `--out`; `replay` holds the lock and
/// keeps a finished run without `--force`; `shrink --out` keeps an existing file without
/// `--force` and never replaces its own input.
#[test]
fn issue_41_output_folders_keep_every_file_no_rehearsal_command_wrote() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |rest: &str| format!("{}/{rest}", tmp.path().display());
    let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    // Case 1: the user's own files under the names a run writes, and no temporary.
    let users = ["temp/notes", "docs/implementation/design.md", "plots/x.svg", "summary.md", "timeline.html", "latency.csv"];
    for file in users {
        std::fs::create_dir_all(Path::new(&t("mine")).join(file).parent().unwrap()).unwrap();
        std::fs::write(Path::new(&t("mine")).join(file), "the user's").unwrap();
    }
    for force in [&[][..], &["--force"][..]] {
        let ran = rehearsal_in(&root(), &[args(&["run", TINY, "--out", &t("mine")]), args(force)].concat());
        ran.assert("run into the user's files", 2, &["not rehearsal's to replace", "latency.csv"]);
    }
    for file in users {
        assert_eq!(std::fs::read_to_string(Path::new(&t("mine")).join(file)).unwrap(), "the user's", "{file} kept");
    }
    rehearsal_in(&root(), &args(&["sweep", TINY, "--seeds", "1", "--out", &t("mine"), "--force"])).assert(
        "sweep --force into the user's files",
        2,
        &["not rehearsal's to replace"],
    );
    // A run's own folder is replaced with --force, and a file the user adds to it is not.
    rehearsal_in(&root(), &args(&["run", TINY, "--out", &t("r")])).assert("a first run", 0, &[]);
    rehearsal_in(&root(), &args(&["run", TINY, "--out", &t("r"), "--force"])).assert("its rerun", 0, &[]);
    std::fs::write(t("r/notes.txt"), "the user's").unwrap();
    rehearsal_in(&root(), &args(&["run", TINY, "--out", &t("r"), "--force"])).assert("a user's file in a run", 2, &["r/notes.txt"]);
    // Case 3: folders that hold the user's world.
    for out in ["/", "/tmp/..", &root().display().to_string()] {
        rehearsal_in(&root(), &args(&["run", TINY, "--out", out])).assert("run --out /", 2, &["refused as an output folder"]);
        rehearsal_in(&root(), &args(&["sweep", TINY, "--seeds", "1", "--out", out, "--force"])).assert(
            "sweep --out / --force",
            2,
            &["refused as an output folder"],
        );
    }
    // Case 2: replay holds the lock and keeps what is there.
    rehearsal_in(&root(), &args(&["-q", "sweep", "tests/bad_input/event-cap.toml", "--seeds", "1", "--out", &t("s")])).assert(
        "a saved error",
        3,
        &[],
    );
    let failure = t("s/failures/event-cap-default-1.toml");
    let replay = |out: &str, more: &[&str]| rehearsal_in(&root(), &[args(&["replay", &failure, "--out", out]), args(more)].concat());
    replay(&t("mine"), &["--force"]).assert("replay --force over the user's files", 2, &["not rehearsal's to replace"]);
    std::fs::remove_file(t("r/notes.txt")).unwrap();
    replay(&t("r"), &[]).assert("replay over a finished run", 2, &["already holds a run"]);
    replay(&t("r"), &["--force"]).assert("replay --force over a run", 3, &["event cap reached"]);
    std::fs::write(t("r/.rehearsal-lock"), format!("pid=1\nstarted=\nhost={}\ncommand=rehearsal run\n", hostname())).unwrap();
    replay(&t("r"), &["--force"]).assert("replay into a folder in use", 2, &["in use by another rehearsal command"]);
    // Case 4: shrink --out.
    let shrink = |out: &str, more: &[&str]| rehearsal_in(&root(), &[args(&["shrink", &failure, "--out", out]), args(more)].concat());
    shrink(&failure, &["--force"]).assert("shrink over its own failure file", 2, &["the failure's own input"]);
    shrink(&root().join("tests/bad_input/event-cap.toml").display().to_string(), &["--force"]).assert(
        "shrink over its own scenario",
        2,
        &["the failure's own input"],
    );
    std::fs::write(t("shrunk.toml"), "the user's").unwrap();
    shrink(&t("shrunk.toml"), &[]).assert("shrink over an existing file", 2, &["the file exists; pass --force"]);
    assert_eq!(std::fs::read_to_string(t("shrunk.toml")).unwrap(), "the user's");
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").map(|h| h.trim().to_string()).unwrap_or_default()
}

/// Runs `rehearsal ARGS` in the project root with stdout (or stderr) going to `to`: a pipe
/// whose reader is already gone, or /dev/full. Its exit code and stderr.
fn rehearsal_into(args: &[String], to: Sink, on_stderr: bool) -> (Option<i32>, String) {
    use std::os::fd::FromRawFd;
    use std::process::Stdio;
    let target = match to {
        Sink::ClosedPipe => {
            let mut fds = [0; 2];
            // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
            assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
            // SAFETY: the read end is ours and closed once: a reader that is gone, as after `head -1`.
            unsafe { libc::close(fds[0]) };
            // SAFETY: the write end is ours; Stdio takes it over.
            unsafe { Stdio::from(std::os::fd::OwnedFd::from_raw_fd(fds[1])) }
        }
        Sink::Full => Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")),
    };
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_rehearsal"));
    command.args(args).current_dir(root()).stdin(Stdio::null());
    let o = if on_stderr {
        command.stdout(Stdio::null()).stderr(target).output().unwrap()
    } else {
        command.stdout(target).stderr(Stdio::piped()).output().unwrap()
    };
    (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[derive(Clone, Copy, Debug)]
enum Sink {
    ClosedPipe,
    Full,
}

/// Issue 41, case 6: no command panics (exit 101) on a closed or full stdout/stderr (every
/// command; calibrate when sqlite3 is installed, as scripts/test.sh makes it). A closed
/// stdout (the reader gone: `| head -1`) ends quietly with the command's own code and what it
/// wrote kept; a full one is an I/O error, exit 3, said on stderr.
#[test]
fn issue_41_every_command_into_a_closed_pipe_or_a_full_disk_never_panics() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |rest: &str| format!("{}/{rest}", tmp.path().display());
    // The document `findings --conductors` splices its section into (its quickest form).
    std::fs::write(t("doc.md"), "# Findings\n").unwrap();
    let args = |list: &[&str]| list.iter().map(|a| a.replace("{T}", &tmp.path().display().to_string())).collect::<Vec<String>>();
    rehearsal_in(&root(), &args(&["-q", "run", TINY, "--out", "{T}/r"])).assert("a run to judge", 0, &[]);
    rehearsal_in(&root(), &args(&["-q", "sweep", TINY, "--seeds", "1", "--shard", "1/1", "--out", "{T}/shard"])).assert("a shard", 0, &[]);
    rehearsal_in(&root(), &args(&["-q", "sweep", "tests/bad_input/event-cap.toml", "--seeds", "1", "--out", "{T}/s"])).assert(
        "a saved error",
        3,
        &[],
    );
    rehearsal_in(&root(), &args(&["-q", "sweep", "scenarios/faults/zombie.toml", "--seeds", "7", "--out", "{T}/z"])).assert(
        "a failure to shrink",
        1,
        &[],
    );
    // Each command, its code when nobody reads, and a fresh --out for each attempt.
    let commands: Vec<(Vec<&str>, i32)> = vec![
        (vec!["run", TINY, "--out", "{T}/run-N"], 0),
        (vec!["variants"], 0),
        (vec!["sweep", TINY, "--seeds", "1..=2", "--out", "{T}/sweep-N"], 0),
        (vec!["merge", "{T}/shard", "--out", "{T}/merge-N"], 0),
        (vec!["replay", "{T}/s/failures/event-cap-default-1.toml", "--out", "{T}/replay-N"], 3),
        (vec!["judge", "{T}/r", "--scenario", TINY], 0),
        (vec!["check", TINY], 0),
        (vec!["compare", TINY, "--variants", "default,fencing", "--seeds", "1", "--out", "{T}/compare-N"], 0),
        (vec!["list", "tests/bad_input"], 0),
        (vec!["new", "{T}/new-N.toml"], 0),
        (vec!["completions", "bash"], 0),
        (vec!["--help"], 0),
        (vec!["run", "/dev/null"], 2),
        (vec!["explore", "crashes", TINY, "--points", "1", "--out", "{T}/explore-N"], 0),
        (vec!["search", TINY, "--runs", "2", "--out", "{T}/search-N"], 0),
        (vec!["bench", TINY, "--seeds", "1", "--param", "timing.background_poll_ms=1000,2000", "--out", "{T}/bench-N"], 0),
        (vec!["shrink", "{T}/z/failures/zombie-default-7.toml", "--out", "{T}/shrunk-N.toml"], 0),
        (vec!["swarm", "--scenarios", "1", "--seeds-per", "1", "--out", "{T}/swarm-N"], 0),
        (FINDINGS.to_vec(), 0),
    ];
    let sqlite3 = std::process::Command::new("sqlite3").arg("--version").output().is_ok_and(|o| o.status.success());
    assert!(sqlite3 || std::env::var_os("CI").is_none(), "sqlite3 is not installed (scripts/test.sh installs it)");
    let calibrate = (vec!["calibrate", "statements", "--samples", "5", "--max-seconds", "20", "--out", "{T}/calibrate-N"], 0);
    let commands: Vec<(Vec<&str>, i32)> = commands.into_iter().chain(sqlite3.then_some(calibrate)).collect();
    let mut attempt = 0;
    for (command, code) in &commands {
        for (sink, on_stderr) in [(Sink::ClosedPipe, false), (Sink::Full, false), (Sink::Full, true)] {
            attempt += 1;
            let list: Vec<String> = args(command).into_iter().map(|a| a.replace("-N", &format!("-{attempt}"))).collect();
            let (got, stderr) = rehearsal_into(&list, sink, on_stderr);
            let what = format!("rehearsal {} with {} into {sink:?}", list.join(" "), if on_stderr { "stderr" } else { "stdout" });
            assert!(got != Some(101) && !stderr.contains("panicked"), "{what}: {got:?}\n{stderr}");
            let expected = match (sink, on_stderr) {
                (Sink::ClosedPipe, _) => *code,
                // A command with nothing to say on stderr is not hurt by a full one.
                (Sink::Full, true) if *code == 0 && got == Some(0) => 0,
                (Sink::Full, _) if *code <= 1 => 3,
                (Sink::Full, _) => *code,
            };
            assert_eq!(got, Some(expected), "{what}\n{stderr}");
            if matches!(sink, Sink::Full) && !on_stderr && expected == 3 && *code != 3 {
                assert!(stderr.contains("cannot write to standard output"), "{what}: {stderr}");
            }
        }
    }
    // What finished is kept: the run into a closed pipe wrote its whole folder.
    for file in ["comms.db", "trace.csv", "summary.md"] {
        assert!(Path::new(&t("run-1")).join(file).exists(), "{file} kept");
    }
}

/// `findings` in its quickest form: one seed of each finding under two conductor profiles,
/// spliced into a document that exists.
const FINDINGS: [&str; 7] = ["findings", "--conductors", "invented,attentive", "--seeds", "1", "--out", "{T}/doc.md"];

/// This binary as its "reproduce with:" and "replay" lines name it: `rehearsal` when that name
/// on PATH runs it, else its own path (sim/base/shell.rs).
fn bin() -> String {
    let me = std::fs::canonicalize(env!("CARGO_BIN_EXE_rehearsal")).unwrap();
    let on_path = std::env::var_os("PATH").and_then(|p| std::env::split_paths(&p).map(|d| d.join("rehearsal")).find(|p| p.is_file()));
    match on_path.and_then(|p| std::fs::canonicalize(p).ok()) {
        Some(found) if found == me => "rehearsal".to_string(),
        _ => rehearsal::base::shell::quote_path(&me),
    }
}

/// The files under `dir` (relative paths), sorted.
fn files_under(dir: &Path) -> Vec<String> {
    let mut found = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                stack.push(path);
            } else {
                found.push(path.strip_prefix(dir).unwrap().display().to_string());
            }
        }
    }
    found.sort();
    found
}

/// Issue 41, cases 5, 11, 13 and 14: an orderly error leaves no temporary (a run stopped by
/// the event cap, a sweep's saved erroring pair); a merge stopped half way is marked
/// INCOMPLETE and holds no half-copied failure; merged failures' reports name the merged
/// replay files; a deep table header is placed by line and column.
#[test]
fn issue_41_whole_or_nothing_merged_failures_and_deep_headers() {
    let tmp = tempfile::tempdir().unwrap();
    let t = |rest: &str| format!("{}/{rest}", tmp.path().display());
    let args = |list: &[&str]| list.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let tmp_files = |dir: &str| files_under(Path::new(dir)).into_iter().filter(|f| f.ends_with(".tmp")).collect::<Vec<_>>();
    // Case 13.
    let cap = "tests/bad_input/event-cap.toml";
    rehearsal_in(&root(), &args(&["-q", "run", cap, "--out", &t("r")])).assert("event cap", 3, &["event cap reached"]);
    assert_eq!(tmp_files(&t("r")), Vec::<String>::new(), "an orderly error removes its temporaries");
    rehearsal_in(&root(), &args(&["-q", "sweep", cap, "--seeds", "1", "--shard", "1/1", "--out", &t("s")])).assert("saved error", 3, &[]);
    assert_eq!(tmp_files(&t("s/failures")), Vec::<String>::new(), "a saved erroring pair holds no temporary");
    // Case 11: a shard of failing pairs, merged.
    let zombie = "scenarios/faults/zombie.toml";
    rehearsal_in(&root(), &args(&["-q", "sweep", zombie, "--seeds", "7", "--shard", "1/1", "--out", &t("z")])).assert(
        "a failing shard",
        1,
        &[],
    );
    rehearsal_in(&root(), &args(&["-q", "merge", &t("z"), "--out", &t("m")])).assert("its merge", 1, &[]);
    let summary = std::fs::read_to_string(t("m/failures/zombie-default-7/summary.md")).unwrap();
    assert!(summary.contains(&t("m/failures/zombie-default-7.toml")) && !summary.contains(&t("z/failures")), "{summary}");
    let timeline = std::fs::read_to_string(t("m/failures/zombie-default-7/timeline.html")).unwrap();
    assert!(!timeline.contains(&t("z/failures")), "the timeline names the merged folder");
    assert!(!Path::new(&t("m/INCOMPLETE")).exists(), "a whole merge is not marked");
    // Case 5: a merge stopped while copying (a file it cannot read) is marked and half of nothing.
    std::os::unix::fs::symlink(t("nowhere"), t("z/failures/zombie-default-7/gone")).unwrap();
    let ran = rehearsal_in(&root(), &args(&["-q", "merge", &t("z"), "--out", &t("m2")]));
    assert_eq!(ran.code, Some(3), "{}", ran.stderr);
    assert!(Path::new(&t("m2/INCOMPLETE")).exists(), "an unfinished merge is marked");
    let left = files_under(Path::new(&t("m2/failures")));
    assert!(left.is_empty(), "no half-copied failure, no temporary, no replay file without its folder: {left:?}");
    // Case 14.
    std::fs::write(t("deep.toml"), format!("[tasks]\ncount = 1\n[{}]\n", vec!["a"; 20_000].join("."))).unwrap();
    rehearsal_in(&root(), &args(&["check", &t("deep.toml")])).assert(
        "a deep header",
        2,
        &[&format!("{}:3:1: recursion limit", t("deep.toml"))],
    );
}

/// Issue 41, case 10: `judge` refuses (exit 2, file:line) a trace that is not whole or not in
/// order, and a comms.db that is not the trace's run's; a fuzz of deletions, swaps, cuts and
/// edited times, none of which may be judged as the run.
#[test]
fn issue_41_judge_refuses_what_is_not_whole_or_not_the_run_s() {
    use rehearsal::base::error::Error;
    let tmp = tempfile::tempdir().unwrap();
    let quickstart = root().join("scenarios/quickstart.toml");
    for seed in ["3", "4"] {
        let out = tmp.path().join(seed).display().to_string();
        let args: Vec<String> =
            ["-q", "run", "scenarios/quickstart.toml", "--seed", seed, "--out", &out].iter().map(|a| a.to_string()).collect();
        rehearsal_in(&root(), &args).assert("a run to judge", 0, &[]);
    }
    let original = std::fs::read_to_string(tmp.path().join("3/trace.csv")).unwrap();
    let lines: Vec<&str> = original.lines().collect();
    let judge = |name: &str, trace: &str, db: Option<&[u8]>| {
        let dir = tmp.path().join(name);
        crate::support::copy_tree(&tmp.path().join("3"), &dir);
        std::fs::write(dir.join("trace.csv"), trace).unwrap();
        if let Some(db) = db {
            std::fs::write(dir.join("comms.db"), db).unwrap();
        }
        rehearsal::campaign::judge::judge_run(&dir, Some(&quickstart), false)
    };
    let refused = |name: &str, trace: String, db: Option<&[u8]>, expect: &str| match judge(name, &trace, db) {
        Err(Error::Input(m)) => assert!(m.contains(expect), "{name}: {m}"),
        Err(e) => panic!("{name}: not bad input: {e}"),
        Ok(judged) => panic!("{name}: judged as the run: {}", judged.line()),
    };
    let with = |edit: &dyn Fn(&mut Vec<String>)| {
        let mut l: Vec<String> = lines.iter().map(|s| s.to_string()).collect();
        edit(&mut l);
        l.join("\n") + "\n"
    };
    assert!(judge("as-is", &original, None).is_ok_and(|j| j.line().contains("PASS")), "the run itself is judged");
    let mark = lines.iter().position(|l| l.contains("mark_complete")).expect("a mark_complete row");
    refused("swap", with(&|l| l.swap(10, 11)), None, "trace.csv:11: column `seq`");
    refused("time 0", with(&|l| l[20] = format!("0{}", &l[20][l[20].find(',').unwrap()..])), None, "trace.csv:21: column `t_ms`");
    refused("mark_complete deleted", with(&|l| drop(l.remove(mark))), None, &format!("trace.csv:{}: column `seq`", mark + 1));
    refused("cut at a line", with(&|l| l.truncate(l.len() / 2)), None, "without its run_end row");
    refused("cut in a line", original[..original.len() - 7].to_string(), None, "cut short");
    let other_db = std::fs::read(tmp.path().join("4/comms.db")).unwrap();
    refused("another run's comms.db", original.clone(), Some(&other_db), "not the comms.db of the run");
    refused("garbage comms.db", original.clone(), Some(b"not a database at all, not even close....".repeat(200).as_slice()), "comms.db");
    // C120: the run_end row seals the rows' count and bytes, the run_start row names the
    // scenario's text by its hash: a forged field, another run's end row, a seal cut out, or a
    // scenario file edited since are refused at the line that shows it.
    let end = lines.len();
    refused(
        "forged seed",
        original.replacen(" seed=3 ", " seed=4 ", 1),
        None,
        &format!("trace.csv:{end}: the rows before the run_end row are not the ones it sealed"),
    );
    refused(
        "forged scenario name",
        original.replacen("scenario=quickstart.toml", "scenario=other.toml", 1),
        None,
        "not the ones it sealed",
    );
    let sha_at = original.find("scenario_sha256=").expect("the scenario's hash in run_start") + "scenario_sha256=".len();
    let forged_sha = format!("{}{}{}", &original[..sha_at], "0".repeat(64), &original[sha_at + 64..]);
    refused(
        "forged scenario hash",
        forged_sha,
        None,
        "trace.csv:2: column `observed`: the run was made with a scenario whose text has sha256",
    );
    let other_trace = std::fs::read_to_string(tmp.path().join("4/trace.csv")).unwrap();
    let other_end = other_trace.lines().last().unwrap().to_string();
    refused("another run's end row", with(&|l| *l.last_mut().unwrap() = other_end.clone()), None, &format!("trace.csv:{end}:"));
    refused("another run's trace", other_trace.clone(), None, "not the comms.db of the run");
    let unsealed = lines[end - 1].split(" rows=").next().unwrap().to_string();
    refused(
        "seal cut out",
        with(&|l| *l.last_mut().unwrap() = unsealed.clone()),
        None,
        &format!("trace.csv:{end}: column `observed`: the run_end row has no `rows=` and `sha256=` seal"),
    );
    refused(
        "rows miscounted",
        with(&|l| *l.last_mut().unwrap() = l[end - 1].replace(&format!(" rows={} ", end - 2), " rows=7 ")),
        None,
        "the run_end row seals 7 rows",
    );
    let edited = tmp.path().join("quickstart.toml");
    std::fs::write(&edited, std::fs::read_to_string(&quickstart).unwrap() + "\n# edited since the run\n").unwrap();
    let dir = tmp.path().join("edited scenario");
    crate::support::copy_tree(&tmp.path().join("3"), &dir);
    match rehearsal::campaign::judge::judge_run(&dir, Some(&edited), false) {
        Err(Error::Input(m)) => assert!(m.contains("trace.csv:2:") && m.contains("edited since"), "{m}"),
        other => panic!("an edited scenario was judged: {:?}", other.map(|j| j.line())),
    }
    // The fuzz: a row deleted, two rows swapped, a time moved back, a byte of a row changed,
    // the trace cut after a row with its end row kept, each at many places. Each is refused as
    // bad input naming trace.csv and a line.
    let mut x: u64 = 41;
    for i in 0..100 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let at = 2 + (x >> 33) as usize % (lines.len() - 3);
        let trace = match i % 5 {
            0 => with(&|l| drop(l.remove(at))),
            1 => with(&|l| l.swap(at, at + 1)),
            2 => with(&|l| l[at] = format!("0{}", &l[at][l[at].find(',').unwrap()..])),
            3 => with(&|l| {
                // A byte of the row changed to another printable one that keeps the CSV's shape.
                let mut bytes = l[at].clone().into_bytes();
                let k = (x >> 13) as usize % bytes.len();
                if bytes[k].is_ascii_alphanumeric() {
                    bytes[k] = if bytes[k] == b'7' { b'8' } else { b'7' };
                }
                l[at] = String::from_utf8(bytes).unwrap();
            }),
            _ => with(&|l| {
                let end_row = l.pop().unwrap();
                l.truncate(at);
                l.push(end_row);
            }),
        };
        if trace == original {
            continue;
        }
        match judge(&format!("fuzz-{i}"), &trace, None) {
            Err(Error::Input(m)) => assert!(m.contains("trace.csv:"), "mutation {i} at line {}: {m}", at + 1),
            Err(e) => panic!("mutation {i} at line {}: not bad input: {e}", at + 1),
            Ok(j) => panic!("mutation {i} at line {} was judged as the run: {}", at + 1, j.line()),
        }
    }
}
