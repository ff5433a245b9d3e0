//! The task plans: `[tasks]` and its `[[tasks.custom]]` entries turned into one `TaskPlan` per
//! task, each checked against the limits that keep a typo from asking for a simulation that
//! cannot end.

use super::file::{TaskCustom, TasksSection};
use super::locate::Problem;
use crate::vocab::task_id;

/// One task's instruction plan: its steps, subagents per step, and the steps after which a
/// checkpoint review is due (000 "Checkpoint Types"). The completion review after the last
/// step is always there (000 "Completion Flow").
#[derive(Clone, Debug, PartialEq)]
pub struct TaskPlan {
    /// `task-01`, `task-02`, … (000 Bootstrap 1: "task #3 → task-03").
    pub task_id: String,
    pub number: u64,
    pub steps: u64,
    /// The most subagents of any step (every step's number unless `step_agents` says more).
    pub subagents_per_step: u64,
    /// Subagents of each step: `step_agents[s - 1]` for step `s`, `steps` entries.
    pub step_agents: Vec<u64>,
    /// Sorted, distinct, each in 1..=steps.
    pub checkpoints: Vec<u64>,
}

impl TaskPlan {
    pub fn is_checkpoint(&self, step: u64) -> bool {
        self.checkpoints.contains(&step)
    }

    /// Subagents of step `step` (0 outside the plan).
    pub fn agents_in(&self, step: u64) -> u64 {
        step.checked_sub(1).and_then(|i| self.step_agents.get(i as usize)).copied().unwrap_or(0)
    }

    /// Subagents of steps `from..=to`.
    pub fn agents_of_steps(&self, from: u64, to: u64) -> u64 {
        (from..=to).map(|s| self.agents_in(s)).sum()
    }
}

/// Upper bounds that keep a typo from asking for a simulation that cannot end.
const TASKS_MAX: u64 = 10_000;
const STEPS_MAX: u64 = 1_000;
const SUBAGENTS_MAX: u64 = 100;

/// One plan for every task of `[tasks]`: the section's own, replaced by each task's
/// `[[tasks.custom]]` entry.
pub(super) fn task_plans(t: &TasksSection) -> Result<Vec<TaskPlan>, Problem> {
    if t.count > TASKS_MAX {
        return Err(Problem::at("tasks", "count", format!("at most {TASKS_MAX} tasks, got {}", t.count)));
    }
    let default_plan = PlanShape {
        steps: t.steps,
        subagents_per_step: t.subagents_per_step,
        step_agents: t.step_agents.clone(),
        checkpoints: t.checkpoints.clone(),
    };
    default_plan.check().map_err(|(key, m)| Problem::at("tasks", key, m))?;
    let mut tasks: Vec<TaskPlan> = (1..=t.count).map(|n| default_plan.plan(n)).collect();
    let mut seen: Vec<u64> = Vec::new();
    for (index, custom) in t.custom.iter().enumerate() {
        if custom.task == 0 || custom.task > t.count {
            let message = format!("task {} does not exist: tasks.count is {}", custom.task, t.count);
            return Err(Problem::in_entry("tasks.custom", index, "task", message));
        }
        if seen.contains(&custom.task) {
            return Err(Problem::in_entry("tasks.custom", index, "task", format!("task {} is customised twice", custom.task)));
        }
        seen.push(custom.task);
        let shape = custom_shape(t, custom);
        shape.check().map_err(|(key, m)| Problem::in_entry("tasks.custom", index, key, m))?;
        tasks[(custom.task - 1) as usize] = shape.plan(custom.task);
    }
    Ok(tasks)
}

/// A custom entry's plan: what it leaves out comes from `[tasks]`; the section's checkpoints
/// past the entry's last step are dropped.
fn custom_shape(t: &TasksSection, custom: &TaskCustom) -> PlanShape {
    let steps = custom.steps.unwrap_or(t.steps);
    PlanShape {
        steps,
        subagents_per_step: custom.subagents_per_step.unwrap_or(t.subagents_per_step),
        // A custom entry's own `step_agents`, or the section's if its steps are the same.
        step_agents: custom.step_agents.clone().or_else(|| {
            if custom.subagents_per_step.is_some() || custom.steps.is_some_and(|s| s != t.steps) {
                None
            } else {
                t.step_agents.clone()
            }
        }),
        checkpoints: custom.checkpoints.clone().unwrap_or_else(|| t.checkpoints.iter().copied().filter(|c| *c <= steps).collect()),
    }
}

struct PlanShape {
    steps: u64,
    subagents_per_step: u64,
    step_agents: Option<Vec<u64>>,
    checkpoints: Vec<u64>,
}

impl PlanShape {
    /// The key at fault and why.
    fn check(&self) -> Result<(), (&'static str, String)> {
        if self.steps > STEPS_MAX {
            return Err(("steps", format!("at most {STEPS_MAX} steps, got {}", self.steps)));
        }
        if self.subagents_per_step > SUBAGENTS_MAX {
            return Err(("subagents_per_step", format!("at most {SUBAGENTS_MAX}, got {}", self.subagents_per_step)));
        }
        if let Some(agents) = &self.step_agents {
            if agents.len() as u64 != self.steps {
                return Err(("step_agents", format!("one number per step: {} steps, {} numbers", self.steps, agents.len())));
            }
            if let Some(n) = agents.iter().find(|n| **n > SUBAGENTS_MAX) {
                return Err(("step_agents", format!("at most {SUBAGENTS_MAX} per step, got {n}")));
            }
        }
        for (i, c) in self.checkpoints.iter().enumerate() {
            if *c == 0 || *c > self.steps {
                return Err(("checkpoints", format!("checkpoint after step {c} is outside steps 1..={}", self.steps)));
            }
            if i > 0 && self.checkpoints[i - 1] >= *c {
                return Err(("checkpoints", "checkpoints must be increasing step numbers".to_string()));
            }
        }
        Ok(())
    }

    fn plan(&self, number: u64) -> TaskPlan {
        let step_agents = self.step_agents.clone().unwrap_or_else(|| vec![self.subagents_per_step; self.steps as usize]);
        TaskPlan {
            task_id: task_id(number),
            number,
            steps: self.steps,
            subagents_per_step: step_agents.iter().copied().max().unwrap_or(0),
            step_agents,
            checkpoints: self.checkpoints.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tasks(text: &str) -> TasksSection {
        toml::from_str(text).unwrap()
    }

    fn refused(text: &str) -> Problem {
        task_plans(&tasks(text)).expect_err(text)
    }

    #[test]
    fn custom_entries_replace_the_plan_of_their_task_and_keep_the_checkpoints_that_fit() {
        let plans = task_plans(&tasks("count = 3\nsteps = 5\ncheckpoints = [2, 4]\n[[custom]]\ntask = 2\nsteps = 3\n")).unwrap();
        assert_eq!(
            plans.iter().map(|p| (p.task_id.as_str(), p.steps)).collect::<Vec<_>>(),
            [("task-01", 5), ("task-02", 3), ("task-03", 5)]
        );
        assert_eq!(plans[1].checkpoints, [2]);
        assert!(plans[0].is_checkpoint(4) && !plans[1].is_checkpoint(4));
    }

    #[test]
    fn the_limits_refuse_one_past_and_accept_the_limit() {
        assert_eq!(refused("count = 10001").message, "at most 10000 tasks, got 10001");
        assert_eq!(task_plans(&tasks("count = 10000\nsteps = 1000\nsubagents_per_step = 100\n")).unwrap().len(), 10_000);
        assert_eq!(refused("count = 1\nsteps = 1001").key, "steps");
        assert_eq!(refused("count = 1\nsubagents_per_step = 101").key, "subagents_per_step");
    }

    #[test]
    fn step_agents_give_each_step_its_own_number_of_subagents() {
        let plans = task_plans(&tasks("count = 2\nsteps = 5\nstep_agents = [1, 1, 2, 2, 3]\n[[custom]]\ntask = 2\nsteps = 2\n")).unwrap();
        assert_eq!((plans[0].agents_in(4), plans[0].agents_in(5), plans[0].agents_in(6)), (2, 3, 0));
        assert_eq!((plans[0].subagents_per_step, plans[0].agents_of_steps(4, 5)), (3, 5));
        assert_eq!(plans[1].step_agents, [2, 2], "a custom plan of other steps keeps subagents_per_step");
        assert_eq!(refused("count = 1\nsteps = 2\nstep_agents = [1]").key, "step_agents");
        assert_eq!(refused("count = 1\nsteps = 1\nstep_agents = [101]").key, "step_agents");
    }

    #[test]
    fn checkpoints_are_increasing_steps_of_the_plan() {
        assert_eq!(refused("count = 1\nsteps = 4\ncheckpoints = [5]").message, "checkpoint after step 5 is outside steps 1..=4");
        assert_eq!(refused("count = 1\ncheckpoints = [2, 2]").message, "checkpoints must be increasing step numbers");
        assert!(task_plans(&tasks("count = 1\nsteps = 4\ncheckpoints = [1, 4]")).is_ok());
    }

    #[test]
    fn custom_entries_name_an_existing_task_once() {
        let missing = refused("count = 2\n[[custom]]\ntask = 3\n");
        assert_eq!((missing.section, missing.index, missing.key), ("tasks.custom", Some(0), "task"));
        assert_eq!(missing.message, "task 3 does not exist: tasks.count is 2");
        let twice = refused("count = 2\n[[custom]]\ntask = 2\n[[custom]]\ntask = 2\n");
        assert_eq!((twice.index, twice.message.as_str()), (Some(1), "task 2 is customised twice"));
        let bad_shape = refused("count = 2\n[[custom]]\ntask = 1\ncheckpoints = [0]\n");
        assert_eq!((bad_shape.section, bad_shape.index, bad_shape.key), ("tasks.custom", Some(0), "checkpoints"));
    }
}
