mod aws_behaviour;
mod dynalite_tags;
mod kinesis_destinations;
mod moto_attribute_definitions;
mod proxy;
mod servers;
