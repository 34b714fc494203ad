SELECT id, Location.*, i.a.b.*, v.* INTO out FROM input i
