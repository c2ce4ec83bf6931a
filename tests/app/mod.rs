mod moto;
