//! The functions' schedules and environments in template.yaml, without a server: each function
//! is its own handler crate serving one operation, builds its policy from the stack's
//! parameters, runs on a schedule in the policy's time zone that passes the scheduled time, and
//! the `Paused` parameter stops both schedules. The schedules' inputs through the handlers
//! against moto are in the top-level `tests/` package (`deploy::schedule_inputs`).

use ddb_rollover::Operation;
use deploy_checks::template::{Function, RepoTemplate, Template, SCHEDULED_TIME_PLACEHOLDER};

fn functions() -> Vec<Function> {
    Template::load()
        .functions()
        .unwrap_or_else(|e| panic!("template.yaml: {e}"))
}

#[test]
fn every_function_serves_an_operation_and_its_env_policy_parses() {
    let functions = functions();
    let mut operations: Vec<_> = functions
        .iter()
        .map(|f| {
            f.operation()
                .unwrap_or_else(|| panic!("{}: binary {:?} is no known function", f.logical_id, f.binary))
        })
        .collect();
    operations.sort_by_key(|o| o.as_str());
    assert_eq!(operations, [Operation::CreateNew, Operation::ResizeOld]);

    for f in &functions {
        // Each function is its own handler crate (the card's shape): CodeUri is
        // crates/BINARY, a package named BINARY whose one binary is src/main.rs, so sam build
        // needs no BuildProperties.Binary to pick it.
        assert_eq!(
            f.code_uri,
            format!("crates/{}", f.binary),
            "{}: CodeUri must be the function's own handler crate",
            f.logical_id
        );
        let crate_dir = testkit::repo_root().join(&f.code_uri);
        assert!(
            crate_dir.join("src/main.rs").is_file() && !crate_dir.join("src/bin").exists(),
            "{}: {} must hold one binary, src/main.rs",
            f.logical_id,
            f.code_uri
        );
        let template_text = std::fs::read_to_string(deploy_checks::template::template_path()).unwrap();
        assert!(
            !template_text.contains("BuildProperties"),
            "template.yaml: each CodeUri holds one binary; BuildProperties.Binary is not needed"
        );
        let policy = f
            .policy()
            .unwrap_or_else(|e| panic!("{}: ROLLOVER_POLICY does not parse: {e}", f.logical_id));
        // The template's defaults are the README's (and the blog's) policy, with string keys
        // (what the application helpers need).
        let readme_default = ddb_rollover::Policy::from_json(
            r#"{"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,
                "key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"S"}},
                "phases":[{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1},
                          {"min_age":2,"read":1,"write":1}]}"#,
        )
        .unwrap();
        assert_eq!(policy, readme_default, "{}", f.logical_id);
    }
}

#[test]
fn env_policy_follows_the_parameters() {
    let mut template = Template::load();
    for (name, value) in [
        ("TablePrefix", "metrics.v2"),
        ("Period", "hour"),
        ("TimeZone", "Europe/Berlin"),
        ("Premake", "3"),
        ("HotReadCapacity", "50"),
        ("HotWriteCapacity", "60"),
        ("WarmReadCapacity", "7"),
        ("WarmWriteCapacity", "8"),
        ("ColdReadCapacity", "2"),
        ("ColdWriteCapacity", "3"),
    ] {
        template.set_parameter(name, value);
    }
    for f in template.functions().unwrap() {
        let p = f.policy().unwrap_or_else(|e| panic!("{}: {e}", f.logical_id));
        assert_eq!(p.prefix, "metrics.v2");
        assert_eq!(p.timezone.name(), "Europe/Berlin");
        assert_eq!(p.premake, 3);
        let capacities: Vec<_> = p
            .phases
            .iter()
            .map(|ph| (ph.min_age, ph.billing.to_string()))
            .collect();
        let expected: Vec<(u32, String)> = [(0, 50, 60), (1, 7, 8), (2, 2, 3)]
            .into_iter()
            .map(|(age, read, write)| (age, format!("{read} RCU / {write} WCU")))
            .collect();
        assert_eq!(capacities, expected);
        for s in &f.schedules {
            assert_eq!(
                s.timezone.as_deref(),
                Some("Europe/Berlin"),
                "{}.{}",
                f.logical_id,
                s.event
            );
        }
    }
}

#[test]
fn every_function_has_a_schedule_in_the_policy_time_zone_with_the_scheduled_time() {
    for f in functions() {
        assert!(
            !f.schedules.is_empty(),
            "{} has no ScheduleV2 event",
            f.logical_id
        );
        let policy = f.policy().unwrap();
        for s in &f.schedules {
            assert!(
                s.input.contains(SCHEDULED_TIME_PLACEHOLDER),
                "{}.{}: Input must pass {SCHEDULED_TIME_PLACEHOLDER} so retries decide as the first delivery: {}",
                f.logical_id,
                s.event,
                s.input
            );
            assert_eq!(
                s.timezone.as_deref(),
                Some(policy.timezone.name()),
                "{}.{}: the schedule's time zone must be the policy's",
                f.logical_id,
                s.event
            );
            assert!(
                s.expression.starts_with("cron(") || s.expression.starts_with("rate("),
                "{}.{}: {}",
                f.logical_id,
                s.event,
                s.expression
            );
        }
    }
}

#[test]
fn paused_disables_both_schedules_and_only_them() {
    let states = |paused: Option<&str>| -> Vec<(String, bool)> {
        let mut template = Template::load();
        if let Some(paused) = paused {
            template.set_parameter("Paused", paused);
        }
        let functions = template.functions().unwrap();
        functions
            .iter()
            .flat_map(|f| {
                f.schedules
                    .iter()
                    .map(|s| (format!("{}.{}", f.logical_id, s.event), s.enabled))
            })
            .collect()
    };
    let running = states(None);
    assert_eq!(running.len(), 2, "{running:?}");
    assert!(running.iter().all(|(_, enabled)| *enabled), "{running:?}");
    assert_eq!(states(Some("false")), running);
    let paused = states(Some("true"));
    assert_eq!(paused.len(), 2, "{paused:?}");
    assert!(paused.iter().all(|(_, enabled)| !enabled), "{paused:?}");

    // Nothing else changes: the functions' environments (and so their policies) and roles.
    let mut template = Template::load();
    template.set_parameter("Paused", "true");
    for (f, g) in template.functions().unwrap().iter().zip(functions()) {
        assert_eq!(f.environment, g.environment, "{}", f.logical_id);
        assert_eq!(f.role, g.role, "{}", f.logical_id);
    }
}
