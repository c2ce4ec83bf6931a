//! Export ARNs in their two forms, for [`super::Proxy`]'s exports: moto names an export
//! `arn:…:table/{table ARN}/import/{id}`, AWS `{table ARN}/export/{id}`
//! (`aws_model::exports::export_arn`). The proxy gives clients AWS's form and moto its own.

/// AWS's form of a moto export ARN (`arn:…:table/{table ARN}/import/{id}` to
/// `{table ARN}/export/{id}`); any other ARN as it is.
pub(super) fn aws_export_arn(arn: &str) -> String {
    let Some((_, rest)) = arn.split_once(":table/arn:") else {
        return arn.to_string();
    };
    match rest.rsplit_once("/import/") {
        Some((table, id)) => format!("arn:{table}/export/{id}"),
        None => arn.to_string(),
    }
}

/// moto's form of an AWS export ARN (the inverse of [`aws_export_arn`]).
pub(super) fn moto_export_arn(arn: &str) -> String {
    if arn.contains(":table/arn:") {
        return arn.to_string();
    }
    let Some((table, id)) = arn.rsplit_once("/export/") else {
        return arn.to_string();
    };
    let Some((scope, _)) = table.split_once(":table/") else {
        return arn.to_string();
    };
    format!("{scope}:table/{table}/import/{id}")
}

/// A JSON body with every `ExportArn` field (at any depth) mapped by `map`; other bodies as
/// they are.
pub(super) fn rewrite_export_arns(body: &[u8], map: fn(&str) -> String) -> hyper::body::Bytes {
    fn walk(value: &mut serde_json::Value, map: fn(&str) -> String) {
        match value {
            serde_json::Value::Object(fields) => {
                for (name, field) in fields.iter_mut() {
                    match field {
                        serde_json::Value::String(text) if name == "ExportArn" => *text = map(text),
                        _ => walk(field, map),
                    }
                }
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(|v| walk(v, map)),
            _ => {}
        }
    }
    match serde_json::from_slice::<serde_json::Value>(body) {
        Ok(mut value) => {
            walk(&mut value, map);
            hyper::body::Bytes::from(value.to_string())
        }
        Err(_) => hyper::body::Bytes::copy_from_slice(body),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn export_arns_go_between_motos_form_and_awss() {
        let moto = "arn:aws:dynamodb:us-east-1:1:table/arn:aws:dynamodb:us-east-1:1:table/t/import/abc";
        let aws = "arn:aws:dynamodb:us-east-1:1:table/t/export/abc";
        assert_eq!(aws_export_arn(moto), aws);
        assert_eq!(moto_export_arn(aws), moto);
        assert_eq!(aws_export_arn(aws), aws);
        let body = rewrite_export_arns(
            format!("{{\"ExportSummaries\":[{{\"ExportArn\":\"{moto}\"}}]}}").as_bytes(),
            aws_export_arn,
        );
        assert!(String::from_utf8_lossy(&body).contains(aws));
    }
}
