//! `rehearsal list [DIR]`: every scenario file under a folder with its description, so a new
//! user can see what is shipped without opening each file.

use std::path::{Path, PathBuf};

use crate::base::error::{Error, Result};
use crate::input::scenario::Scenario;

/// One scenario file: its path and description, or why it does not load.
pub struct Listed {
    pub path: PathBuf,
    pub description: std::result::Result<String, String>,
}

/// The `.toml` files under `dir`, sorted by path, each loaded for its description.
pub fn list(dir: &Path) -> Result<Vec<Listed>> {
    if !dir.is_dir() {
        return Err(Error::input(format!("{}: not a folder of scenarios", dir.display())));
    }
    let mut files = Vec::new();
    walk(dir, &mut files)?;
    files.sort();
    Ok(files
        .into_iter()
        .map(|path| {
            let description = Scenario::load(&path).map(|s| s.description).map_err(|e| e.to_string());
            Listed { path, description }
        })
        .collect())
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    for entry in std::fs::read_dir(dir).map_err(|e| Error::input(format!("{}: {e}", dir.display())))? {
        let path = entry.map_err(|e| Error::input(format!("{}: {e}", dir.display())))?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "toml") {
            out.push(path);
        }
    }
    Ok(())
}

/// `path  description`, the paths padded to one column.
pub fn render(listed: &[Listed]) -> String {
    let width = listed.iter().map(|l| l.path.display().to_string().len()).max().unwrap_or(0);
    let mut out = String::new();
    for l in listed {
        let text = match &l.description {
            Ok(d) if d.is_empty() => "(no description)".to_string(),
            Ok(d) => d.clone(),
            Err(e) => format!("(does not load: {e})"),
        };
        out.push_str(&format!("{:<width$}  {text}\n", l.path.display().to_string()));
    }
    out
}
