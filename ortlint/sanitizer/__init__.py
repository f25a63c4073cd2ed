"""Runtime evidence: AddressSanitizer/LeakSanitizer reports related to the static findings.

`log` parses logs into plain data, `matcher` relates each report to the finding that explains it
(or says why none does), `facts` reads the escape behind a missing finding off the IR, and
`command` wires them for `ortlint sanitizer`. Nothing here decides a finding.
"""
