"$DPROBE" check --no-elf --filter 'g/e=a == 1 && s ~ "foo*"' --filter 'e=a = 1' \
	--filter 'e=s > 3' --filter 'g:e=(a == 1' --filter 'nosuch=a == 1' \
	'p:g/e /bin/sh:0x10 a=%di:s32 s=+0(%si):string'
