mod archive_moto;
mod autoscaling_moto;
mod ddblocal;
mod grace;
mod indexes;
mod no_autoscaling_servers;
mod promises_moto;
mod sdk_moto;
