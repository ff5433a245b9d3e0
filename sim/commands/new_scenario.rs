//! `rehearsal new FILE`: a commented scenario to start from, which runs as written
//! (tests/it/cli_extras.rs runs it).

use std::path::Path;

use crate::base::error::{Error, Result};

/// The template: every section a new user needs first, each with a comment saying what it is.
pub const TEMPLATE: &str = include_str!("new_scenario.toml");

/// Writes the template to `path`, whole or not at all; an existing file is refused unless
/// `force`.
pub fn write(path: &Path, force: bool) -> Result<()> {
    if path.exists() && !force {
        return Err(Error::input(format!("{} already exists; pass --force to replace it", path.display())));
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        crate::base::live_files::create_dir_all(parent).map_err(|e| Error::input(format!("cannot create {}: {e}", parent.display())))?;
    }
    crate::base::atomic::write_atomically(path, TEMPLATE.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_template_is_a_valid_scenario() {
        let scenario = crate::input::scenario::Scenario::parse(TEMPLATE, Path::new("new.toml")).expect("the template parses");
        assert_eq!(scenario.tasks.len(), 2);
        assert!(!scenario.description.is_empty());
    }
}
