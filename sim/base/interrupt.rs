//! Ctrl-C for long commands (sweeps, benches): the first SIGINT asks them to stop starting
//! work and to write what they have, marked incomplete; a second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

/// Exit status after an interrupt, as shells report SIGINT (128 + 2).
pub const EXIT_INTERRUPTED: i32 = 130;

/// Installs the handler (once per process; later calls do nothing).
pub fn install() {
    INSTALL.call_once(|| {
        let installed = ctrlc::set_handler(|| {
            if INTERRUPTED.swap(true, Ordering::SeqCst) {
                eprintln!("rehearsal: interrupted twice; stopping now, unfinished results are lost");
                // `exit` runs no destructors: the scratch folders would stay on the tmpfs.
                crate::base::scratch::remove_live();
                std::process::exit(EXIT_INTERRUPTED);
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
