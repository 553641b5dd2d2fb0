import json,sys
d=json.load(open(sys.argv[1]))
R={(r['mode'],r['question_id']):r for L in d['levels'] for r in L['records']}
same=diff=0; n=0
for (m,q),s in R.items():
    if m!='single' or ('multi',q) not in R: continue
    mm=R[('multi',q)]; sel=[x for x in mm['trace']['notes'] if x.startswith('selector: the plain draft')]
    if not sel or 'note added' in sel[0] or 'replaces' in sel[0]: continue
    if s['answer'].strip()==mm['answer'].strip(): same+=1
    else: diff+=1
print(sys.argv[1], 'plain draft as is', same+diff, 'same as single', same, 'different', diff,
      '| single', sum(r['passed'] for (m,q),r in R.items() if m=='single'), 'multi', sum(r['passed'] for (m,q),r in R.items() if m=='multi'), 'of', sum(1 for (m,q) in R if m=='single'))
