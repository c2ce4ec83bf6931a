//! A policy's hash is tagged on every table it creates (`ddb-rollover:policy-hash`), so a
//! change to how the document is read must not change the document a valid policy writes.
//! The values below (for `crates/core/tests/fixtures/policy_with_indexes.toml` and the
//! default policy) were computed before the document layer took key types and projections as
//! strings, and must stay exactly these.

use ddb_rollover::Policy;

/// A policy with every kind of index, the hour period, a grace, a template and retention.
const WITH_INDEXES: &str = include_str!("../../fixtures/policy_with_indexes.toml");

const DEFAULT_DOCUMENT: &str = r#"{"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,"key":{"partition":{"name":"pk","type":"N"},"sort":{"name":"sk","type":"N"}},"phases":[{"min_age":0,"read":300,"write":1000},{"min_age":1,"read":100,"write":1},{"min_age":2,"read":1,"write":1}]}"#;

const WITH_INDEXES_DOCUMENT: &str = r#"{"prefix":"metrics","period":"hour","timezone":"Europe/Berlin","premake":3,"key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"N"}},"indexes":[{"name":"by_device","partition":{"name":"device","type":"S"},"sort":{"name":"sk","type":"N"},"projection":"keys_only"},{"name":"by_site","partition":{"name":"site","type":"B"},"projection":{"include":["temp","hum"]}}],"local_indexes":[{"name":"by_time","sort":{"name":"ts","type":"N"},"projection":"all"}],"phases":[{"min_age":0,"read":50,"write":500,"index_read":20,"index_overrides":{"by_site":{"read":3,"write":4}}},{"min_age":24,"billing":"on_demand","index_max_read":9,"table_class":"standard_ia"}],"grace":"1h 30m","template":{"stream":"new_image","encryption":"aws_managed","tags":{"team":"iot"}},"retention":{"delete_after":2000,"max_deletes_per_run":5,"keep_newest":4}}"#;

const DEFAULT_SERIALIZED: &str = r#"{"prefix":"timeseries","period":"day","timezone":"UTC","premake":1,"key":{"partition":{"name":"pk","type":"N"},"sort":{"name":"sk","type":"N"}},"indexes":[],"local_indexes":[],"phases":[{"min_age":0,"billing":{"mode":"provisioned","read":300,"write":1000},"index_billing":{"mode":"provisioned","read":300,"write":1000},"table_class":null,"autoscaling":null},{"min_age":1,"billing":{"mode":"provisioned","read":100,"write":1},"index_billing":{"mode":"provisioned","read":100,"write":1},"table_class":null,"autoscaling":null},{"min_age":2,"billing":{"mode":"provisioned","read":1,"write":1},"index_billing":{"mode":"provisioned","read":1,"write":1},"table_class":null,"autoscaling":null}],"grace":null,"template":{"ttl_attribute":null,"point_in_time_recovery":false,"deletion_protection":null,"stream":null,"encryption":null,"tags":{}},"retention":null,"rates":{"list_tags_of_resource":10,"tag_resource":5}}"#;

const WITH_INDEXES_SERIALIZED: &str = r#"{"prefix":"metrics","period":"hour","timezone":"Europe/Berlin","premake":3,"key":{"partition":{"name":"pk","type":"S"},"sort":{"name":"sk","type":"N"}},"indexes":[{"name":"by_device","key":{"partition":{"name":"device","type":"S"},"sort":{"name":"sk","type":"N"}},"projection":"keys_only"},{"name":"by_site","key":{"partition":{"name":"site","type":"B"}},"projection":{"include":["temp","hum"]}}],"local_indexes":[{"name":"by_time","sort":{"name":"ts","type":"N"},"projection":"all"}],"phases":[{"min_age":0,"billing":{"mode":"provisioned","read":50,"write":500},"index_billing":{"mode":"provisioned","read":20,"write":500},"index_overrides":{"by_site":{"read":3,"write":4}},"table_class":null,"autoscaling":null},{"min_age":24,"billing":{"mode":"on_demand","max_read":null,"max_write":null},"index_billing":{"mode":"on_demand","max_read":9,"max_write":null},"table_class":"standard_ia","autoscaling":null}],"grace":{"secs":5400,"nanos":0},"template":{"ttl_attribute":null,"point_in_time_recovery":false,"deletion_protection":null,"stream":"new_image","encryption":{"key":"aws_managed"},"tags":{"team":"iot"}},"retention":{"archive":null,"delete_after":2000,"max_deletes_per_run":5,"keep_newest":4},"rates":{"list_tags_of_resource":10,"tag_resource":5}}"#;

#[test]
fn the_default_policys_document_and_hash_are_unchanged() {
    let policy = Policy::default();
    assert_eq!(
        serde_json::to_string(&policy.to_document()).unwrap(),
        DEFAULT_DOCUMENT
    );
    assert_eq!(policy.hash(), "8a7d5f52a950e47e");
    assert_eq!(serde_json::to_string(&policy).unwrap(), DEFAULT_SERIALIZED);
}

#[test]
fn a_policy_with_indexes_keeps_its_document_and_hash() {
    let policy = Policy::from_toml(WITH_INDEXES).unwrap();
    assert_eq!(
        serde_json::to_string(&policy.to_document()).unwrap(),
        WITH_INDEXES_DOCUMENT
    );
    assert_eq!(policy.hash(), "12d5c83403252083");
    assert_eq!(serde_json::to_string(&policy).unwrap(), WITH_INDEXES_SERIALIZED);
    // Its document reads back as the same policy.
    assert_eq!(Policy::from_json(WITH_INDEXES_DOCUMENT).unwrap(), policy);
}
