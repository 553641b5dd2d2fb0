"""Teaching: a teacher agent teaches a student agent that starts empty, then both take a quiz (``moot teach``, the teaching level of the eval)."""
