//! Statement names: every protocol statement the simulator executes, the parameters it binds
//! to each, and whether it writes. The SQL itself is data (`scenarios/protocol.sql` and
//! overrides); these are only its names, so actors, the world and the oracles agree on them.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stmt {
    ConductorRegister,
    CreateTask,
    SendInstruction,
    ConductorHeartbeat,
    ConductorSetState,
    PollTasks,
    ReadMusicianMessages,
    SendConductorMessage,
    SetTaskState,
    ClaimTask,
    InsertFallbackRow,
    SendClaimBlocked,
    ReadInstruction,
    Heartbeat,
    ReadTaskState,
    ReadNewConductorMessages,
    SendReviewRequest,
    SetNeedsReview,
    ResumeWorking,
    SendCompletion,
    MarkComplete,
    StopHookState,
    SendError,
    SetError,
    SendContextWarning,
    SetContextWarning,
    SendHandoff,
    MarkExited,
    SendResumption,
    ConductorHealth,
    ReadLatestConductorMessage,
    ReadTaskRecord,
    ReadTaskMessages,
    SetEscalation,
    ConductorResume,
    ReadConductorMessages,
    ReadSiblingStates,
    SendReceipt,
    ReleaseTask,
}

impl Stmt {
    pub const ALL: [Stmt; 39] = [
        Stmt::ConductorRegister,
        Stmt::CreateTask,
        Stmt::SendInstruction,
        Stmt::ConductorHeartbeat,
        Stmt::ConductorSetState,
        Stmt::PollTasks,
        Stmt::ReadMusicianMessages,
        Stmt::SendConductorMessage,
        Stmt::SetTaskState,
        Stmt::ClaimTask,
        Stmt::InsertFallbackRow,
        Stmt::SendClaimBlocked,
        Stmt::ReadInstruction,
        Stmt::Heartbeat,
        Stmt::ReadTaskState,
        Stmt::ReadNewConductorMessages,
        Stmt::SendReviewRequest,
        Stmt::SetNeedsReview,
        Stmt::ResumeWorking,
        Stmt::SendCompletion,
        Stmt::MarkComplete,
        Stmt::StopHookState,
        Stmt::SendError,
        Stmt::SetError,
        Stmt::SendContextWarning,
        Stmt::SetContextWarning,
        Stmt::SendHandoff,
        Stmt::MarkExited,
        Stmt::SendResumption,
        Stmt::ConductorHealth,
        Stmt::ReadLatestConductorMessage,
        Stmt::ReadTaskRecord,
        Stmt::ReadTaskMessages,
        Stmt::SetEscalation,
        Stmt::ConductorResume,
        Stmt::ReadConductorMessages,
        Stmt::ReadSiblingStates,
        Stmt::SendReceipt,
        Stmt::ReleaseTask,
    ];

    /// The `-- name:` of its entry in a protocol SQL file.
    pub fn name(self) -> &'static str {
        match self {
            Stmt::ConductorRegister => "conductor_register",
            Stmt::CreateTask => "create_task",
            Stmt::SendInstruction => "send_instruction",
            Stmt::ConductorHeartbeat => "conductor_heartbeat",
            Stmt::ConductorSetState => "conductor_set_state",
            Stmt::PollTasks => "poll_tasks",
            Stmt::ReadMusicianMessages => "read_musician_messages",
            Stmt::SendConductorMessage => "send_conductor_message",
            Stmt::SetTaskState => "set_task_state",
            Stmt::ClaimTask => "claim_task",
            Stmt::InsertFallbackRow => "insert_fallback_row",
            Stmt::SendClaimBlocked => "send_claim_blocked",
            Stmt::ReadInstruction => "read_instruction",
            Stmt::Heartbeat => "heartbeat",
            Stmt::ReadTaskState => "read_task_state",
            Stmt::ReadNewConductorMessages => "read_new_conductor_messages",
            Stmt::SendReviewRequest => "send_review_request",
            Stmt::SetNeedsReview => "set_needs_review",
            Stmt::ResumeWorking => "resume_working",
            Stmt::SendCompletion => "send_completion",
            Stmt::MarkComplete => "mark_complete",
            Stmt::StopHookState => "stop_hook_state",
            Stmt::SendError => "send_error",
            Stmt::SetError => "set_error",
            Stmt::SendContextWarning => "send_context_warning",
            Stmt::SetContextWarning => "set_context_warning",
            Stmt::SendHandoff => "send_handoff",
            Stmt::MarkExited => "mark_exited",
            Stmt::SendResumption => "send_resumption",
            Stmt::ConductorHealth => "conductor_health",
            Stmt::ReadLatestConductorMessage => "read_latest_conductor_message",
            Stmt::ReadTaskRecord => "read_task_record",
            Stmt::ReadTaskMessages => "read_task_messages",
            Stmt::SetEscalation => "set_escalation",
            Stmt::ConductorResume => "conductor_resume",
            Stmt::ReadConductorMessages => "read_conductor_messages",
            Stmt::ReadSiblingStates => "read_sibling_states",
            Stmt::SendReceipt => "send_receipt",
            Stmt::ReleaseTask => "release_task",
        }
    }

    /// The named parameters the simulator binds; a statement may use any subset of them.
    pub fn params(self) -> &'static [&'static str] {
        match self {
            Stmt::ConductorRegister => &[":session_id"],
            Stmt::CreateTask => &[":task_id", ":instruction_path"],
            Stmt::SendInstruction => &[":task_id", ":message"],
            Stmt::ConductorHeartbeat => &[],
            Stmt::ConductorSetState => &[":state"],
            Stmt::PollTasks => &[],
            Stmt::ReadMusicianMessages => &[":last_id"],
            Stmt::SendConductorMessage => &[":task_id", ":message", ":message_type"],
            Stmt::SetTaskState => &[":task_id", ":state"],
            Stmt::ClaimTask => &[":task_id", ":session_id", ":worked_by"],
            Stmt::InsertFallbackRow => &[":session_id"],
            Stmt::SendClaimBlocked => &[":task_id", ":session_id", ":message"],
            Stmt::ReadInstruction => &[":task_id"],
            Stmt::Heartbeat => &[":task_id", ":session_id"],
            Stmt::ReadTaskState => &[":task_id"],
            Stmt::ReadNewConductorMessages => &[":task_id", ":last_processed_message_id"],
            Stmt::SendReviewRequest => &[":task_id", ":session_id", ":message"],
            Stmt::SetNeedsReview => &[":task_id", ":session_id"],
            Stmt::ResumeWorking => &[":task_id", ":session_id"],
            Stmt::SendCompletion => &[":task_id", ":session_id", ":message"],
            Stmt::MarkComplete => &[":task_id", ":session_id", ":report_path"],
            Stmt::StopHookState => &[":session_id"],
            Stmt::SendError => &[":task_id", ":session_id", ":message"],
            Stmt::SetError => &[":task_id", ":session_id", ":last_error"],
            Stmt::SendContextWarning => &[":task_id", ":session_id", ":message"],
            Stmt::SetContextWarning => &[":task_id", ":session_id"],
            Stmt::SendHandoff => &[":task_id", ":session_id", ":message"],
            Stmt::MarkExited => &[":task_id", ":session_id"],
            Stmt::SendResumption => &[":task_id", ":session_id", ":message"],
            Stmt::ConductorHealth => &[],
            Stmt::ReadLatestConductorMessage => &[":task_id"],
            Stmt::ReadTaskRecord => &[":task_id"],
            Stmt::ReadTaskMessages => &[":task_id"],
            Stmt::SetEscalation => &[":task_id", ":session_id", ":last_error"],
            Stmt::ConductorResume => &[":session_id"],
            Stmt::ReadConductorMessages => &[],
            Stmt::ReadSiblingStates => &[":task_id"],
            Stmt::SendReceipt => &[":task_id", ":session_id", ":message", ":last_processed_message_id", ":lease_until"],
            Stmt::ReleaseTask => &[":task_id", ":state", ":stale_after_s"],
        }
    }

    /// Every parameter the simulator binds to the statement: `params()`, and for `claim_task`
    /// what a protocol designer's own SQL may need beyond the seeds' (a compare-and-set claim):
    /// `:previous_session_id` (the row's `session_id` as the session read it before claiming:
    /// a successor's `read_task_record`, NULL for a first session, which reads nothing),
    /// `:label` (`S1`, `S2`, a twin's `S1b`) and `:attempt` (1 for a task's first session, 2
    /// for `S2`, …). The trace records only `params()`, so binding these changes no trace.
    pub fn supplied(self) -> &'static [&'static str] {
        match self {
            Stmt::ClaimTask => &[":task_id", ":session_id", ":worked_by", ":previous_session_id", ":label", ":attempt"],
            other => other.params(),
        }
    }

    /// Whether the statement writes. A SQL override must keep it: the database checks the
    /// prepared form against this before the run (a write turned read would hide effects).
    pub fn writes(self) -> bool {
        !matches!(
            self,
            Stmt::PollTasks
                | Stmt::ReadMusicianMessages
                | Stmt::ReadInstruction
                | Stmt::ReadTaskState
                | Stmt::ReadNewConductorMessages
                | Stmt::StopHookState
                | Stmt::ConductorHealth
                | Stmt::ReadLatestConductorMessage
                | Stmt::ReadTaskRecord
                | Stmt::ReadTaskMessages
                | Stmt::ReadConductorMessages
                | Stmt::ReadSiblingStates
        )
    }

    /// An INSERT of a message (`send_…`): it touches no task row.
    pub fn inserts_message(self) -> bool {
        self.name().starts_with("send_")
    }

    pub fn parse(name: &str) -> Option<Stmt> {
        Stmt::ALL.into_iter().find(|s| s.name() == name)
    }
}

impl fmt::Display for Stmt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_are_unique() {
        for stmt in Stmt::ALL {
            assert_eq!(Stmt::parse(stmt.name()), Some(stmt));
        }
        let mut names: Vec<&str> = Stmt::ALL.iter().map(|s| s.name()).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), Stmt::ALL.len());
        assert_eq!(Stmt::parse("drop_table"), None);
    }

    #[test]
    fn every_message_insert_writes_and_binds_its_message() {
        for stmt in Stmt::ALL.into_iter().filter(|s| s.inserts_message()) {
            assert!(stmt.writes(), "{stmt}");
            assert!(stmt.params().contains(&":message"), "{stmt}");
        }
        assert!(!Stmt::PollTasks.writes() && Stmt::ClaimTask.writes());
    }
}
