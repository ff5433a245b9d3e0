//! The commands that take a finished run or a saved failure again: `replay`, `judge`,
//! `shrink`, and `check` (a scenario validated without running it).

use std::path::PathBuf;

use clap::Args;

use super::Outcome;
use crate::base::error::Error;
use crate::vocab::RunOutcome;

#[derive(Args)]
pub struct ReplayArgs {
    /// A saved failure file, e.g. DIR/failures/zombie-default-21.toml from a sweep.
    pub failure: PathBuf,
    /// Stop at this simulated time (ms) and print every task's row.
    #[arg(long)]
    pub until: Option<i64>,
    /// Folder of the replayed run; defaults to reports/replays/<failure file's name>/.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Replace an earlier replay (or run) in that folder; without it such a folder is refused.
    #[arg(long)]
    pub force: bool,
}

pub fn replay(args: ReplayArgs) -> Result<Outcome, Error> {
    let again = format!("rehearsal replay {}", crate::base::shell::quote_path(&args.failure));
    let (text, outcome) =
        crate::campaign::replay::replay(&args.failure, args.until, args.out, args.force).map_err(|e| e.with_replay(&again))?;
    print!("{text}");
    Ok(Outcome::Runs(outcome))
}

#[derive(Args)]
pub struct JudgeArgs {
    /// Run folders (each with trace.csv, comms.db and violations.csv), e.g. reports/runs/quickstart-1.
    #[arg(required_unless_present = "db", conflicts_with = "db")]
    pub runs: Vec<PathBuf>,
    /// Judge a comms.db that real processes wrote (no trace): from its recorded history
    /// (`rehearsal record install`), or from its final tables alone. Rules that need what only
    /// the simulator knows are listed "not judged".
    #[arg(long, value_name = "DB", conflicts_with = "write")]
    pub db: Option<PathBuf>,
    /// Scenario file to judge with, instead of the one each trace names (relative to the folder
    /// the run was made in): for a trace made elsewhere.
    #[arg(long)]
    pub scenario: Option<PathBuf>,
    /// Write violations.csv into each run folder instead of only comparing with it.
    #[arg(long)]
    pub write: bool,
}

/// One line per folder. A folder that cannot be judged is reported and the others are still
/// judged; then the worst decides: a harness error (3), bad input (2), a verdict that differs
/// from the run's (3), a failing verdict (1), else 0.
pub fn judge(args: JudgeArgs) -> Result<Outcome, Error> {
    if let Some(db) = &args.db {
        let judgement = crate::campaign::judge_db::judge_db(db, args.scenario.as_deref())?;
        print!("{}", judgement.report());
        return Ok(if judgement.passed() { Outcome::PASS } else { Outcome::FAIL });
    }
    let mut outcomes = Vec::new();
    let (mut bad_input, mut harness) = (0, 0);
    for dir in &args.runs {
        match crate::campaign::judge::judge_run(dir, args.scenario.as_deref(), args.write) {
            Ok(judged) => {
                println!("{}", judged.line());
                outcomes.push(judged.outcome());
            }
            Err(e) => {
                eprintln!("rehearsal: {e}");
                match e {
                    Error::Input(_) => bad_input += 1,
                    Error::Harness(_) => harness += 1,
                }
            }
        }
    }
    let total = args.runs.len();
    if harness > 0 {
        return Err(Error::harness(format!("{harness} of {total} run folder(s) could not be judged (a harness error)")));
    }
    if bad_input > 0 {
        return Err(Error::input(format!("{bad_input} of {total} run folder(s) could not be judged (bad input)")));
    }
    Ok(Outcome::Runs(RunOutcome::worst(outcomes)))
}

#[derive(Args)]
pub struct ShrinkArgs {
    /// A saved failure file, e.g. DIR/failures/zombie-default-21.toml from a sweep.
    pub failure: PathBuf,
    /// The minimized scenario file to write (TOML); an existing file is refused unless --force.
    #[arg(long, required_unless_present = "into", conflicts_with = "into")]
    pub out: Option<PathBuf>,
    /// A regression corpus folder (e.g. tests/corpus): writes the minimized scenario there as a
    /// new entry named after the failure, with its fingerprint in `[corpus]`.
    #[arg(long, value_name = "DIR")]
    pub into: Option<PathBuf>,
    /// Replace an existing --out file or corpus entry (never the failure's own files).
    #[arg(long)]
    pub force: bool,
}

pub fn shrink(args: ShrinkArgs) -> Result<Outcome, Error> {
    use crate::campaign::shrink::Target;
    let target = match (&args.out, &args.into) {
        (Some(file), _) => Target::File(file),
        (None, Some(dir)) => Target::Corpus(dir),
        (None, None) => return Err(Error::input("shrink: give --out FILE or --into DIR")),
    };
    let report = crate::campaign::shrink::shrink(&args.failure, target, args.force)?;
    println!("fails        {}", report.signature);
    println!("events       {} -> {}", report.events_before, report.events_after);
    println!("faults       {} -> {} ({})", report.faults_before, report.faults_after, report.scripting);
    println!("runs         {}", report.runs);
    if args.into.is_some() {
        println!(
            "fingerprint  {}",
            crate::campaign::corpus::describe(&crate::campaign::corpus::fingerprint(&report.signature, String::new()))
        );
    }
    println!("written      {}", report.written.display());
    Ok(Outcome::PASS)
}

#[derive(Args)]
pub struct CheckArgs {
    /// Scenario files (TOML) to validate, with their SQL and variants.
    #[arg(required_unless_present = "sql")]
    pub scenarios: Vec<PathBuf>,
    /// A protocol SQL file to validate: alone (over the default protocol), or with each
    /// scenario as `--sql` would run it (over the scenario's own SQL).
    #[arg(long, value_name = "FILE")]
    pub sql: Option<PathBuf>,
    /// Validate each scenario under this protocol profile, in place of its own.
    #[arg(long = "protocol", value_name = "NAME")]
    pub protocol: Option<String>,
}

pub fn check(args: CheckArgs) -> Result<Outcome, Error> {
    if args.scenarios.is_empty() {
        if let Some(sql) = &args.sql {
            println!("{}", crate::campaign::replay::check_sql(sql)?);
        }
    }
    for path in &args.scenarios {
        println!("{}", crate::campaign::replay::check(path, args.sql.as_deref(), args.protocol.as_deref(), &[])?);
    }
    Ok(Outcome::PASS)
}
