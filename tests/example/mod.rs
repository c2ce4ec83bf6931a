mod iot_ingest;
