//! Ctrl-C. For long commands that stop cooperatively (sweep, bench, explore, search, swarm:
//! `install`) the first SIGINT asks them to stop starting work and to write what they have,
//! marked incomplete; a second one exits at once. For every other command (`install_at_once`,
//! from main before any command starts) the first one exits at once. Either way an exit at
//! once removes this process's scratch folders, temporaries and locks first
//! (sim/base/live_files.rs) and exits 130, keeping every file finished (issue 41, item 2).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Whether the command stops cooperatively on the first Ctrl-C (`install`).
static COOPERATIVE: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Exit status after an interrupt, as shells report SIGINT (128 + 2).
pub const EXIT_INTERRUPTED: i32 = 130;

/// The command stops cooperatively on the first Ctrl-C: it polls `interrupted` and writes
/// what it has; a second Ctrl-C exits at once.
pub fn install() {
    COOPERATIVE.store(true, Ordering::SeqCst);
    install_handler();
}

/// The first Ctrl-C exits at once (130), after removing the process's temporaries: for
/// commands that do not poll `interrupted`. `install` later makes the command cooperative.
pub fn install_at_once() {
    install_handler();
}

/// Installs the handler (once per process; later calls do nothing).
fn install_handler() {
    INSTALL.call_once(|| {
        let installed = ctrlc::set_handler(|| {
            let again = INTERRUPTED.swap(true, Ordering::SeqCst);
            if again || !COOPERATIVE.load(Ordering::SeqCst) {
                let said = if again {
                    "interrupted twice; stopping now, unfinished results are lost (finished files are kept)"
                } else {
                    "interrupted; stopping now: this command's temporaries are removed, its finished files kept"
                };
                eprintln!("rehearsal: {said}");
                // `exit` runs no destructors: the scratch folders would stay on the tmpfs, the
                // temporaries and the lock in the output folder. The registry stays held to the
                // exit, so no other thread makes a file after the removal.
                crate::base::live_files::remove_live_then(|| std::process::exit(EXIT_INTERRUPTED));
            }
            eprintln!("rehearsal: interrupted; finishing the runs under way and keeping every finished result (Ctrl-C again to stop now)");
        });
        if let Err(e) = installed {
            eprintln!("rehearsal: cannot handle Ctrl-C ({e}); an interrupt will lose unfinished results");
        }
    });
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}
