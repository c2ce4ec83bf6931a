//! The store the control plane finds and proves archives in: S3 where the `s3` feature links
//! it; without it (create_new) there is no S3 client to give, and `NoS3` can never be made.

#[cfg(feature = "s3")]
pub(crate) use s3::{store, S3};

#[cfg(not(feature = "s3"))]
pub(crate) use none::{store, NoS3 as S3};

#[cfg(feature = "s3")]
mod s3 {
    use crate::archive::S3Store;

    pub(crate) type S3 = aws_sdk_s3::Client;

    pub(crate) fn store(s3: &S3) -> S3Store<'_> {
        S3Store(s3)
    }
}

#[cfg(not(feature = "s3"))]
mod none {
    use ddb_rollover::control::{ArchiveStore, Bucket};
    use ddb_rollover::table::{ObjectBody, ObjectHead};

    /// No S3 client is linked: a value of this type cannot exist.
    #[derive(Clone, Debug)]
    pub(crate) enum NoS3 {}

    /// The store over a client that cannot exist (a borrow, so the callers' code after it
    /// stays reachable to the compiler, as it is with S3).
    pub(crate) struct NoStore<'a>(&'a NoS3);

    pub(crate) fn store(s3: &NoS3) -> NoStore<'_> {
        NoStore(s3)
    }

    impl ArchiveStore for NoStore<'_> {
        async fn get(&self, _: Bucket<'_>, _: &str) -> Result<Option<ObjectBody>, String> {
            match *self.0 {}
        }
        async fn list(&self, _: Bucket<'_>, _: &str) -> Result<Vec<String>, String> {
            match *self.0 {}
        }
        async fn head(&self, _: Bucket<'_>, _: &str) -> Result<Option<ObjectHead>, String> {
            match *self.0 {}
        }
    }
}
