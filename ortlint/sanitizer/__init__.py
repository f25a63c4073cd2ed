"""Runtime evidence: AddressSanitizer/LeakSanitizer reports related to the static findings.

`log.py` parses logs into plain data, `matcher.py` relates each report to the finding that explains it
(or says why none does), `facts.py` reads the escape behind a missing finding off the IR, and
`command.py` wires them for `ortlint sanitizer`. Nothing here decides a finding.
"""
