//! Statements: every protocol statement the simulator executes, in one table (`statement_table!`)
//! — its name, whether it writes, which rows it may touch, the parameters the engine binds to it
//! with their types, and the columns it returns with theirs. The SQL itself is data
//! (`scenarios/protocol.sql` and overrides); the table is its shape, so actors, the world, the
//! oracles and the check of a user's SQL entry at prepare (sim/input/sql_catalog.rs) agree on it.

use std::fmt;

pub use super::statement_shape::{col_types, Arg, Call, Col, ColType, Column, Rows};

/// Every statement, once, in `Stmt::ALL`'s order (the order of the prepared statements):
///
/// `Variant snake_name: read|write Rows (param: Type, …; extra: Type, …) -> (column: Type, …; optional: Type, …);`
///
/// - `Rows`: what a write may touch (`TaskRow`: the row of `:task_id`; `ConductorRow`:
///   `task-00`; `NewTask`: a task row it inserts; `Fallback`: the `fallback-<session>` row;
///   `Message`: one message it inserts), `Nothing` for a read.
/// - parameters: what the engine binds (`Stmt::params`, the ones the trace records); after `;`
///   what it binds beyond them (`Stmt::supplied`) for a designer's own SQL. A statement may
///   use any subset. Types: `Text`, `Int`, `State` (a `TaskState`), `Kind` (a `MessageKind`),
///   `OptText`, `OptInt` (NULL when absent).
/// - columns: what the engine reads, by position, in this order; after `;` trailing columns a
///   replacement may add (durable-cursor's `read_task_messages` returns the text too). Types:
///   `Text`, `Int`, `Real`, `State`, `Kind`, and `Expr` (one value whose name is the expression
///   that computes it: its name is not checked).
///
/// A new statement is one line here and its entry in scenarios/protocol.sql (docs/development.md).
/// `statement_table!` hands the lines to a macro of the caller's, as `rule_table!` does.
macro_rules! statement_table {
    ($then:ident) => {
        $then! {
            ConductorRegister conductor_register: write ConductorRow (session_id: Text) -> ();
            CreateTask create_task: write NewTask (task_id: Text, instruction_path: Text) -> ();
            SendInstruction send_instruction: write Message (task_id: Text, message: Text) -> ();
            ConductorHeartbeat conductor_heartbeat: write ConductorRow () -> ();
            ConductorSetState conductor_set_state: write ConductorRow (state: Text) -> ();
            PollTasks poll_tasks: read Nothing ()
                -> (task_id: Text, state: Text, last_heartbeat: Text, seconds_stale: Real, session_id: Text, retry_count: Int);
            ReadMusicianMessages read_musician_messages: read Nothing (last_id: Int)
                -> (id: Int, task_id: Text, from_session: Text, message_type: Kind, message: Text);
            SendConductorMessage send_conductor_message: write Message (task_id: Text, message: Text, message_type: Kind) -> ();
            SetTaskState set_task_state: write TaskRow (task_id: Text, state: State) -> ();
            ClaimTask claim_task: write TaskRow (task_id: Text, session_id: Text, worked_by: Text; previous_session_id: OptText, label: Text, attempt: Int) -> ();
            InsertFallbackRow insert_fallback_row: write Fallback (session_id: Text) -> ();
            SendClaimBlocked send_claim_blocked: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            ReadInstruction read_instruction: read Nothing (task_id: Text) -> (id: Int, message: Text);
            Heartbeat heartbeat: write TaskRow (task_id: Text, session_id: Text) -> ();
            ReadTaskState read_task_state: read Nothing (task_id: Text)
                -> (state: State, retry_count: Int, last_heartbeat: Text, seconds_stale: Real);
            ReadNewConductorMessages read_new_conductor_messages: read Nothing (task_id: Text, last_processed_message_id: Int)
                -> (id: Int, message: Text, timestamp: Text);
            SendReviewRequest send_review_request: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            SetNeedsReview set_needs_review: write TaskRow (task_id: Text, session_id: Text) -> ();
            ResumeWorking resume_working: write TaskRow (task_id: Text, session_id: Text) -> ();
            SendCompletion send_completion: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            MarkComplete mark_complete: write TaskRow (task_id: Text, session_id: Text, report_path: Text) -> ();
            StopHookState stop_hook_state: read Nothing (session_id: Text) -> (task_id: Text, state: State);
            SendError send_error: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            SetError set_error: write TaskRow (task_id: Text, session_id: Text, last_error: Text) -> ();
            SendContextWarning send_context_warning: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            SetContextWarning set_context_warning: write TaskRow (task_id: Text, session_id: Text) -> ();
            SendHandoff send_handoff: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            MarkExited mark_exited: write TaskRow (task_id: Text, session_id: Text) -> ();
            SendResumption send_resumption: write Message (task_id: Text, session_id: Text, message: Text) -> ();
            ConductorHealth conductor_health: read Nothing () -> (state: Text, last_heartbeat: Text, seconds_stale: Real);
            ReadLatestConductorMessage read_latest_conductor_message: read Nothing (task_id: Text)
                -> (id: Int, message: Text, timestamp: Text);
            ReadTaskRecord read_task_record: read Nothing (task_id: Text)
                -> (state: State, session_id: Text, worked_by: Text, started_at: Text);
            ReadTaskMessages read_task_messages: read Nothing (task_id: Text)
                -> (id: Int, from_session: Text, message_type: Kind, timestamp: Text; message: Text);
            SetEscalation set_escalation: write TaskRow (task_id: Text, session_id: Text, last_error: Text) -> ();
            ConductorResume conductor_resume: write ConductorRow (session_id: Text) -> ();
            ReadConductorMessages read_conductor_messages: read Nothing ()
                -> (id: Int, task_id: Text, message_type: Kind, message: Text);
            ReadSiblingStates read_sibling_states: read Nothing (task_id: Text)
                -> (task_id: Text, state: State, last_heartbeat: Text, seconds_stale: Real);
            SendReceipt send_receipt: write Message
                (task_id: Text, session_id: Text, message: Text, last_processed_message_id: Int, lease_until: OptText) -> (messages: Expr);
            ReleaseTask release_task: write TaskRow (task_id: Text, state: State, stale_after_s: OptInt) -> ();
        }
    };
}

/// `Stmt` and its lists, from the table.
macro_rules! statements {
    ($(
        $id:ident $name:ident: $rw:ident $rows:ident
            ($($p:ident: $pt:ident),* $(; $($x:ident: $xt:ident),*)?)
            -> ($($c:ident: $ct:ident),* $(; $($o:ident: $ot:ident),*)?);
    )*) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Stmt {
            $($id,)*
        }

        impl Stmt {
            pub const ALL: [Stmt; [$(stringify!($name)),*].len()] = [$(Stmt::$id),*];

            /// The `-- name:` of its entry in a protocol SQL file.
            pub fn name(self) -> &'static str {
                match self {
                    $(Stmt::$id => stringify!($name),)*
                }
            }

            /// The named parameters the simulator binds; a statement may use any subset of them.
            pub fn params(self) -> &'static [&'static str] {
                match self {
                    $(Stmt::$id => &[$(concat!(":", stringify!($p))),*],)*
                }
            }

            /// Every parameter the simulator binds to the statement: `params()`, and what a
            /// protocol designer's own SQL may need beyond the seeds' (for `claim_task`, a
            /// compare-and-set claim: `:previous_session_id`, the row's `session_id` as the
            /// session read it before claiming, NULL for a first session; `:label`, `S1`, `S2`,
            /// a twin's `S1b`; `:attempt`, 1 for a task's first session). The trace records only
            /// `params()`, so binding these changes no trace.
            pub fn supplied(self) -> &'static [&'static str] {
                match self {
                    $(Stmt::$id => &[$(concat!(":", stringify!($p)),)* $($(concat!(":", stringify!($x))),*)?],)*
                }
            }

            /// Whether the statement writes. A SQL override must keep it: the database checks the
            /// prepared form against this before the run (a write turned read would hide effects).
            pub fn writes(self) -> bool {
                match self {
                    $(Stmt::$id => statements!(@writes $rw),)*
                }
            }

            /// What a write may touch (`Rows::Nothing` for a read).
            pub fn rows(self) -> Rows {
                match self {
                    $(Stmt::$id => Rows::$rows,)*
                }
            }

            /// The columns the engine reads from its result, in order; then the trailing ones a
            /// replacement may add (`optional_columns`).
            pub fn columns(self) -> &'static [Column] {
                match self {
                    $(Stmt::$id => &[$(Column { name: stringify!($c), ty: ColType::$ct }),*],)*
                }
            }

            /// Trailing columns a replacement may return after `columns()`, in this order.
            pub fn optional_columns(self) -> &'static [Column] {
                match self {
                    $(Stmt::$id => &[$($(Column { name: stringify!($o), ty: ColType::$ot }),*)?],)*
                }
            }
        }

        /// One function a statement: its parameters, typed and borrowed, as a `Call`
        /// (`ctx.call(args::heartbeat(task_id, session_id))`).
        pub mod args {
            #![allow(clippy::too_many_arguments)]
            use super::{Arg, Call, Stmt};
            $(
                pub fn $name<'a>($($p: statements!(@arg 'a $pt)),*) -> Call<'a> {
                    Call::new(Stmt::$id, &[$((concat!(":", stringify!($p)), Arg::from($p))),*])
                }
            )*
        }

        /// One module a statement, one typed column each: `cols::read_task_state::state`, a `Col<State>` at 0.
        pub mod cols {
            $(
                #[allow(non_upper_case_globals, dead_code)]
                pub mod $name {
                    #[allow(unused_imports)]
                    use crate::vocab::statement::{col_types::*, Col};
                    statements!(@cols 0usize; $($c: $ct,)* $($($o: $ot,)*)?);
                }
            )*
        }
    };
    (@writes read) => { false };
    (@writes write) => { true };
    (@arg $a:lifetime Text) => { &$a str };
    (@arg $a:lifetime OptText) => { Option<&$a str> };
    (@arg $a:lifetime Int) => { i64 };
    (@arg $a:lifetime OptInt) => { Option<i64> };
    (@arg $a:lifetime State) => { crate::vocab::TaskState };
    (@arg $a:lifetime Kind) => { crate::vocab::MessageKind };
    (@cols $at:expr;) => {};
    (@cols $at:expr; $c:ident: $ct:ident, $($rest:tt)*) => {
        pub const $c: Col<$ct> = Col::at($at);
        statements!(@cols $at + 1; $($rest)*);
    };
}
statement_table!(statements);

impl Stmt {
    /// An INSERT of a message (`send_…`): it touches no task row.
    pub fn inserts_message(self) -> bool {
        self.rows() == Rows::Message
    }

    pub fn parse(name: &str) -> Option<Stmt> {
        Stmt::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The shape an entry for it must have, for error messages: `parameters (:task_id) (any
    /// subset), columns (state, retry_count) in this order`.
    pub fn shape(self) -> String {
        let supplied = self.supplied();
        let params =
            if supplied.is_empty() { "no parameter".to_string() } else { format!("parameters {} (any of them)", supplied.join(", ")) };
        let names = |columns: &[Column]| columns.iter().map(|c| c.name).collect::<Vec<_>>().join(", ");
        let columns = match (self.columns(), self.optional_columns()) {
            ([], _) => "no result column".to_string(),
            (required, []) => format!("result columns ({}) in this order", names(required)),
            (required, optional) => {
                format!("result columns ({}) in this order, optionally followed by ({})", names(required), names(optional))
            }
        };
        format!("{params}; {columns}")
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

    #[test]
    fn no_statement_takes_more_arguments_than_a_call_holds() {
        assert!(Stmt::ALL.iter().all(|s| s.params().len() <= crate::vocab::statement_shape::ARGS_MAX));
        assert!(Stmt::ALL.iter().any(|s| s.params().len() == crate::vocab::statement_shape::ARGS_MAX));
    }
}
