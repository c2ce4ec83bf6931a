//! A binary under test, run to completion: its exit code and output, and a JSON run report's
//! lines.

/// What a binary under test did: exit code and output.
#[derive(Debug)]
pub struct ProcessRun {
    /// The exit code (`None`: killed by a signal).
    pub code: i32,
    /// What it wrote to standard output.
    pub stdout: String,
    /// What it wrote to standard error.
    pub stderr: String,
}

impl ProcessRun {
    /// Runs `command` to completion.
    pub fn of(command: &mut std::process::Command) -> ProcessRun {
        let output = command
            .output()
            .unwrap_or_else(|e| panic!("run {command:?}: {e}"));
        ProcessRun {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Stdout as JSON, whatever the exit code.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", self.stdout, self.stderr))
    }
}

/// A JSON RunReport's lines as (table, action, outcome).
pub fn report_lines(report: &serde_json::Value) -> Vec<(String, String, String)> {
    report["tables"]
        .as_array()
        .unwrap_or_else(|| panic!("no tables in {report:#}"))
        .iter()
        .map(|l| {
            (
                l["table"].as_str().unwrap().to_owned(),
                l["decision"]["action"].as_str().unwrap().to_owned(),
                l["outcome"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}
