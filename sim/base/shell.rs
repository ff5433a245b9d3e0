//! Commands printed for people to paste (replay commands on stdout, in results.csv, junit.xml
//! and bench.csv): every word quoted for a POSIX shell when it needs it, so a path with a
//! space or a quote pastes as one argument. Plain words stay as they are.

use std::path::Path;

/// `word`, quoted for `sh` when it holds anything but letters, digits and `-_./:@%+=,`.
pub fn quote(word: &str) -> String {
    // shlex refuses only a NUL byte, which no path or argument can hold on Unix.
    shlex::try_quote(word).map_or_else(|_| format!("'{}'", word.replace('\'', r"'\''")), |q| q.into_owned())
}

/// A path, quoted as `quote` does.
pub fn quote_path(path: &Path) -> String {
    quote(&path.display().to_string())
}

/// `rehearsal run SCENARIO --seed N [--protocol P] [--variant V]… [--sql FILE]`: the command
/// that runs one pair again (`protocol`: the command line's `--protocol`, if any).
pub fn run_command(scenario: &Path, seed: u64, protocol: Option<&str>, variants: &[String], sql: Option<&Path>) -> String {
    let protocol = protocol.map_or(String::new(), |p| format!(" --protocol {}", quote(p)));
    let variants: String = variants.iter().map(|v| format!(" --variant {}", quote(v))).collect();
    let sql = sql.map_or(String::new(), |sql| format!(" --sql {}", quote_path(sql)));
    format!("rehearsal run {} --seed {seed}{protocol}{variants}{sql}", quote_path(scenario))
}

/// `command` as the terminal shows it (issue 31: "every printed replay command fails as
/// pasted"): a leading `rehearsal ` becomes this program's own path unless `rehearsal` on
/// PATH is this very program (`cargo install --path . --locked` puts it there). Files keep
/// `rehearsal`: a failures folder travels to machines where the path means nothing.
pub fn for_terminal(command: &str) -> String {
    match command.strip_prefix("rehearsal ") {
        Some(rest) => format!("{} {rest}", program()),
        None => command.to_string(),
    }
}

/// `rehearsal` when the name on PATH runs this program, else this program's path, quoted.
pub fn program() -> String {
    let Ok(me) = std::env::current_exe().and_then(std::fs::canonicalize) else { return "rehearsal".to_string() };
    let on_path = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).map(|dir| dir.join("rehearsal")).find(|p| p.is_file()))
        .unwrap_or_default();
    match on_path.and_then(|p| std::fs::canonicalize(p).ok()) {
        Some(found) if found == me => "rehearsal".to_string(),
        _ => quote_path(&me),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_with_spaces_or_quotes_pastes_as_one_word_and_a_plain_one_is_unchanged() {
        assert_eq!(
            run_command(Path::new("scenarios/quickstart.toml"), 4, None, &[], None),
            "rehearsal run scenarios/quickstart.toml --seed 4"
        );
        let odd = run_command(
            Path::new("my scenarios/it's.toml"),
            4,
            Some("repaired"),
            &["fencing".to_string()],
            Some(Path::new("my sql/cas.sql")),
        );
        let words = shlex::split(&odd).expect("the shell reads it");
        assert_eq!(
            words,
            [
                "rehearsal",
                "run",
                "my scenarios/it's.toml",
                "--seed",
                "4",
                "--protocol",
                "repaired",
                "--variant",
                "fencing",
                "--sql",
                "my sql/cas.sql"
            ]
        );
    }
}
