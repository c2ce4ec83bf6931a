//! S3 on moto's own port, for archive exports: make a bucket, put, get, list, move to another
//! storage class and delete objects, as a test or a person at the console would.

use crate::http::{http_exchange, http_request, http_request_with_body, percent_encode, xml_elements};
use crate::launcher::{LocalDynamo, Server};

/// An `Authorization` header in SigV4's shape: moto refuses anonymous reads of a private object
/// (GetObject, a CopyObject's source, a PutObject over one) with 403, as S3 does, and checks
/// only that a principal asked, not the signature.
const AS_A_PRINCIPAL: (&str, &str) = (
    "Authorization",
    "AWS4-HMAC-SHA256 Credential=testing/20200101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
);

/// S3 on the same server, for archive exports. moto serves every service on its one port and
/// accepts unsigned requests, so a plain HTTP/1.1 request over a TcpStream does: no S3 SDK
/// (and its build time) just to make a bucket and read a listing back. These go to moto's own
/// port ([`LocalDynamo::server_endpoint`]): the proxy in front of it is for DynamoDB's
/// behaviour (it forwards S3 requests unchanged too).
impl LocalDynamo {
    /// Creates the S3 bucket `name` (moto only: dynalite has no S3). Panics on a non-2xx reply.
    pub fn create_bucket(&self, name: &str) {
        self.require_s3();
        let path = format!("/{}", percent_encode(name));
        let (status, body) = http_request(self.server_endpoint(), "PUT", &path);
        if !(200..300).contains(&status) {
            panic!(
                "testkit: creating S3 bucket {name:?} on {}: HTTP {status}: {body}",
                self.server_endpoint()
            );
        }
    }

    /// The keys of the objects in `bucket` that start with `prefix`, in S3's (lexicographic)
    /// order. Panics on a non-2xx reply, or if the listing is truncated (over 1000 keys).
    pub fn list_objects(&self, bucket: &str, prefix: &str) -> Vec<String> {
        self.require_s3();
        let path = format!(
            "/{}?list-type=2&prefix={}",
            percent_encode(bucket),
            percent_encode(prefix)
        );
        let (status, body) = http_request(self.server_endpoint(), "GET", &path);
        if !(200..300).contains(&status) {
            panic!(
                "testkit: listing s3://{bucket}/{prefix} on {}: HTTP {status}: {body}",
                self.server_endpoint()
            );
        }
        assert!(
            !body.contains("<IsTruncated>true</IsTruncated>"),
            "testkit: listing s3://{bucket}/{prefix} is truncated; list a narrower prefix"
        );
        xml_elements(&body, "Key")
    }

    /// Puts `body` at `key` in `bucket`. Panics on a non-2xx reply.
    pub fn put_object(&self, bucket: &str, key: &str, body: &[u8]) {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let (status, reply) = http_exchange(self.server_endpoint(), "PUT", &path, &[AS_A_PRINCIPAL], body);
        let reply = String::from_utf8_lossy(&reply);
        if !(200..300).contains(&status) {
            panic!("testkit: putting s3://{bucket}/{key}: HTTP {status}: {reply}");
        }
    }

    /// The bytes of `key` in `bucket`. Panics on a non-2xx reply.
    pub fn get_object(&self, bucket: &str, key: &str) -> Vec<u8> {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let (status, body) = http_exchange(self.server_endpoint(), "GET", &path, &[AS_A_PRINCIPAL], b"");
        if !(200..300).contains(&status) {
            panic!(
                "testkit: getting s3://{bucket}/{key}: HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        body
    }

    /// CopyObject of `key` onto itself with `x-amz-storage-class: {class}` (how someone, or a
    /// lifecycle rule, moves an object to GLACIER). Panics on a non-2xx reply.
    pub fn set_storage_class(&self, bucket: &str, key: &str, class: &str) {
        self.require_s3();
        let path = format!(
            "/{}/{}",
            percent_encode(bucket),
            percent_encode(key).replace("%2F", "/")
        );
        let source = path.clone();
        let headers = [
            ("x-amz-copy-source", source.as_str()),
            ("x-amz-storage-class", class),
            AS_A_PRINCIPAL,
        ];
        let (status, body) = http_exchange(self.server_endpoint(), "PUT", &path, &headers, b"");
        if !(200..300).contains(&status) {
            panic!(
                "testkit: copying s3://{bucket}/{key} to {class}: HTTP {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
    }

    /// Deletes `key` from `bucket` (as someone cleaning the bucket by hand would). Panics on a
    /// non-2xx reply.
    pub fn delete_object(&self, bucket: &str, key: &str) {
        self.require_s3();
        // DeleteObjects: moto refuses an unsigned DeleteObject on a key with `//` (as exports
        // to a prefix ending in `/` write them), and answers this one.
        let path = format!("/{}?delete", percent_encode(bucket));
        let body = format!(
            "<Delete><Object><Key>{}</Key></Object></Delete>",
            key.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        );
        let (status, reply) = http_request_with_body(self.server_endpoint(), "POST", &path, body.as_bytes());
        if !(200..300).contains(&status) || !reply.contains("<Deleted>") {
            panic!("testkit: deleting s3://{bucket}/{key}: HTTP {status}: {reply}");
        }
    }

    /// PutBucketLifecycleConfiguration of one Enabled rule `rule_id` expiring the objects under
    /// `prefix` `days` days after their creation (replacing the bucket's configuration), as
    /// someone tidying the bucket would. moto stores it; the proxy in front of moto says it on
    /// every read of such an object (`x-amz-expiration`, [`crate::Proxy::s3_as_aws`]). Panics on
    /// a non-2xx reply.
    pub fn put_lifecycle_expiration(&self, bucket: &str, rule_id: &str, prefix: &str, days: u32) {
        self.require_s3();
        let escape = |text: &str| {
            text.replace('&', "&amp;")
                .replace('<', "&lt;")
                .replace('>', "&gt;")
        };
        let body = format!(
            "<LifecycleConfiguration><Rule><ID>{}</ID><Filter><Prefix>{}</Prefix></Filter><Status>Enabled</Status><Expiration><Days>{days}</Days></Expiration></Rule></LifecycleConfiguration>",
            escape(rule_id),
            escape(prefix)
        );
        let path = format!("/{}?lifecycle", percent_encode(bucket));
        let (status, reply) = http_request_with_body(self.server_endpoint(), "PUT", &path, body.as_bytes());
        if !(200..300).contains(&status) {
            panic!("testkit: lifecycle of s3://{bucket}: HTTP {status}: {reply}");
        }
    }

    /// DeleteBucketLifecycle: the bucket's rules removed. Panics on a non-2xx reply.
    pub fn delete_lifecycle(&self, bucket: &str) {
        self.require_s3();
        let path = format!("/{}?lifecycle", percent_encode(bucket));
        let (status, reply) = http_request(self.server_endpoint(), "DELETE", &path);
        if !(200..300).contains(&status) {
            panic!("testkit: deleting the lifecycle of s3://{bucket}: HTTP {status}: {reply}");
        }
    }

    /// The bucket is owned by `account` from now on, as the proxy in front of moto answers
    /// ([`crate::Proxy::bucket_owner`]): its objects stay, and reads expecting another owner get
    /// 403. Panics without that proxy.
    pub fn set_bucket_owner(&self, bucket: &str, account: &str) {
        self.require_s3();
        self.aws_shim
            .as_ref()
            .expect("testkit: moto runs behind the AWS-behaviour proxy")
            .bucket_owner(bucket, account);
    }

    fn require_s3(&self) {
        assert!(
            self.server() == Server::Moto,
            "testkit: {} serves no S3; use Server::Moto",
            self.name()
        );
    }
}
