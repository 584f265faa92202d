#!/usr/bin/env python3
"""Every comment in src/, include/, tests/, examples/ and cmake/ that cites a document names one
that exists, and a section or heading it has.

A citation is a document path under docs/, then optionally `§4.8` (or `§4.7, §4.8`) or a quoted
heading (`docs/serve.md "Limits"`). Documents get split and renumbered; this keeps the code's pointers
from going stale silently. Usage: doc_references.py SOURCE_ROOT; exit 1 and one line per stale
citation, 0 when none is.
"""
import glob
import os
import re
import sys

CITATION = re.compile(r'(docs/[\w./-]+?\.md)((?:[ ,]+(?:and )?§[\d.]*\d)*)(?:\s+"([^"]+)")?')
SOURCES = ('.cpp', '.hpp', '.h', '.cu', '.cuh', '.js', '.html', '.css', '.cmake', '.py', '.sh')


def headings(root):
    found = {}
    for path in glob.glob(os.path.join(root, 'docs', '**', '*.md'), recursive=True):
        with open(path, encoding='utf-8') as doc:
            found[os.path.relpath(path, root)] = [line.lstrip('#').strip() for line in doc if line.startswith('#')]
    return found


def stale_in_line(doc_headings, line):
    for match in CITATION.finditer(line):
        doc, sections, heading = match.group(1), match.group(2) or '', match.group(3)
        if doc not in doc_headings:
            yield f'{doc} does not exist'
            continue
        titles = doc_headings[doc]
        for section in re.findall(r'§([\d.]*\d)', sections):
            if not any(re.search('§' + re.escape(section) + r'(?![\d])', t) for t in titles):
                yield f'{doc} has no section §{section}'
        if heading and not any(t == heading or t.startswith(heading) or t.endswith(heading) for t in titles):
            yield f'{doc} has no heading "{heading}"'


def main(root):
    doc_headings = headings(root)
    stale = []
    for folder in ('src', 'include', 'tests', 'examples', 'cmake'):
        for path in sorted(glob.glob(os.path.join(root, folder, '**', '*'), recursive=True)):
            if not path.endswith(SOURCES):
                continue
            with open(path, encoding='utf-8', errors='replace') as source:
                for number, line in enumerate(source, 1):
                    for why in stale_in_line(doc_headings, line):
                        stale.append(f'{os.path.relpath(path, root)}:{number}: {why}')
    print('\n'.join(stale) if stale else 'every citation of docs/ points at a section that exists')
    return 1 if stale else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
