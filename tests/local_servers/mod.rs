mod aws_behaviour;
mod dynalite_tags;
mod moto_attribute_definitions;
mod proxy;
mod servers;
