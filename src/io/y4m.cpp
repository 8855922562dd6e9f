// Placeholder: being written (issue 4 foundations).
