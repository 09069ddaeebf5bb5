"""The book's tooling: notebook set-up and figure style, in-page explorers, quizzes, the student
edition and link check, the Sphinx glue and the common-mistakes page."""
