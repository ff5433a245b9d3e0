//! Task states: the eleven values of `orchestration_tasks.state`'s CHECK constraint (seed 004
//! "Database"), with their meaning in 002's state machine.

use super::word::{word_traits, Word};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TaskState {
    Watching,
    Reviewing,
    ExitRequested,
    Complete,
    Working,
    NeedsReview,
    ReviewApproved,
    ReviewFailed,
    Error,
    FixProposed,
    Exited,
}

impl TaskState {
    /// In the order of the schema's CHECK list.
    pub const ALL: [TaskState; 11] = [
        TaskState::Watching,
        TaskState::Reviewing,
        TaskState::ExitRequested,
        TaskState::Complete,
        TaskState::Working,
        TaskState::NeedsReview,
        TaskState::ReviewApproved,
        TaskState::ReviewFailed,
        TaskState::Error,
        TaskState::FixProposed,
        TaskState::Exited,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Watching => "watching",
            TaskState::Reviewing => "reviewing",
            TaskState::ExitRequested => "exit_requested",
            TaskState::Complete => "complete",
            TaskState::Working => "working",
            TaskState::NeedsReview => "needs_review",
            TaskState::ReviewApproved => "review_approved",
            TaskState::ReviewFailed => "review_failed",
            TaskState::Error => "error",
            TaskState::FixProposed => "fix_proposed",
            TaskState::Exited => "exited",
        }
    }

    pub fn parse(text: &str) -> Option<TaskState> {
        <TaskState as Word>::from_text(text)
    }

    /// 002 "Terminal States": a session's work on the row is over.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskState::Complete | TaskState::Exited)
    }

    /// 002 "Guard Clause Rules": the states a new session may claim from.
    pub fn is_claimable(self) -> bool {
        matches!(self, TaskState::Watching | TaskState::FixProposed | TaskState::ExitRequested)
    }
}

word_traits!(TaskState, "task state");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_states_are_exactly_the_schema_check_list() {
        let schema = include_str!("../../scenarios/schema.sql");
        let check = schema.split("state IN (").nth(1).unwrap().split(')').next().unwrap();
        let listed: Vec<&str> = check.split(',').map(|s| s.trim().trim_matches('\'')).collect();
        let ours: Vec<&str> = TaskState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(listed, ours);
        for state in TaskState::ALL {
            assert_eq!(TaskState::parse(state.as_str()), Some(state));
        }
        assert_eq!(TaskState::parse("finished"), None);
        crate::vocab::word::check::round_trips::<TaskState>("finished");
        assert_eq!("workng".parse::<TaskState>().unwrap_err().to_string().rsplit("; ").next(), Some("did you mean `working`?"));
    }

    #[test]
    fn terminal_and_claimable_states_follow_002() {
        let terminal: Vec<_> = TaskState::ALL.into_iter().filter(|s| s.is_terminal()).collect();
        assert_eq!(terminal, [TaskState::Complete, TaskState::Exited]);
        let claimable: Vec<_> = TaskState::ALL.into_iter().filter(|s| s.is_claimable()).collect();
        assert_eq!(claimable, [TaskState::Watching, TaskState::ExitRequested, TaskState::FixProposed]);
    }
}
