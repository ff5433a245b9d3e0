//! The coverage section of a summary.md: 002's table with how often runs made each
//! transition, in any context and in each fault context; the ones never reached; the other
//! transitions seen (the implied ones, the conductor's, any outside the table); the writes
//! that changed no row.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{Context, Coverage, Item, Writer};
use crate::judging::oracle::rules::allowed_transitions::TABLE_002;
use crate::vocab::TaskState;

fn header(first: &str) -> String {
    let contexts: Vec<&str> = Context::ALL.iter().map(|c| c.as_str()).collect();
    let columns = 2 + contexts.len() + usize::from(first.contains('|'));
    format!("| {first} | any | {} |\n{}|\n", contexts.join(" | "), "| --- ".repeat(columns))
}

/// The counts of one transition: any context, then each fault context.
fn counts(coverage: &Coverage, writer: Writer, from: TaskState, to: TaskState) -> String {
    let count = |context| coverage.count(&Item::Transition { writer, from, to, context });
    let mut cells = vec![count(None).to_string()];
    cells.extend(Context::ALL.iter().map(|c| count(Some(*c)).to_string()));
    cells.join(" | ")
}

/// The markdown section, headed `## Protocol coverage`.
pub fn markdown(coverage: &Coverage) -> String {
    let mut md = String::from("## Protocol coverage\n\n");
    md.push_str("002's musician transitions (`sim/judging/oracle/rules/allowed_transitions.rs`): writes that made each, in any context and in each fault context (`sim/judging/coverage/item.rs`).\n\n");
    md.push_str(&header("transition"));
    let mut never = Vec::new();
    for (from, to) in TABLE_002 {
        let _ = writeln!(md, "| {from} → {to} | {} |", counts(coverage, Writer::Musician, from, to));
        if coverage.count(&Item::Transition { writer: Writer::Musician, from, to, context: None }) == 0 {
            never.push(format!("`{from} → {to}`"));
        }
    }
    if never.is_empty() {
        md.push_str("\nEvery transition of 002's table was reached.\n");
    } else {
        let _ = writeln!(md, "\nNever reached ({} of {}): {}.", never.len(), TABLE_002.len(), never.join(", "));
    }
    let others: BTreeSet<(Writer, TaskState, TaskState)> = coverage
        .reached()
        .filter_map(|(item, _)| match *item {
            Item::Transition { writer, from, to, .. } if !(writer == Writer::Musician && TABLE_002.contains(&(from, to))) => {
                Some((writer, from, to))
            }
            _ => None,
        })
        .collect();
    if !others.is_empty() {
        md.push_str("\nOther transitions (the text's implied ones, the conductor's, any outside 002's table):\n\n");
        md.push_str(&header("writer | transition"));
        for (writer, from, to) in others {
            let _ = writeln!(md, "| {} | {from} → {to} | {} |", writer.as_str(), counts(coverage, writer, from, to));
        }
    }
    let zero: Vec<String> = coverage
        .reached()
        .filter_map(|(item, n)| match item {
            Item::ZeroRows(stmt) => Some(format!("`{stmt}` ×{n}")),
            Item::Transition { .. } | Item::Note(_) => None,
        })
        .collect();
    let _ = writeln!(md, "\nWrites that changed no row: {}.", if zero.is_empty() { "none".to_string() } else { zero.join(", ") });
    let notes: Vec<String> = coverage
        .reached()
        .filter_map(|(item, n)| if let Item::Note(name) = item { Some(format!("`{name}` ×{n}")) } else { None })
        .collect();
    let _ = writeln!(md, "\nDecisions noted (`note` items): {}.", if notes.is_empty() { "none".to_string() } else { notes.join(", ") });
    md
}
