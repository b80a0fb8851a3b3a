"""Device backends behind one ``Device`` protocol."""
