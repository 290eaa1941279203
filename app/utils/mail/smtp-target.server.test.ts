import { describe, expect, test } from 'vitest'
import { smtpTarget } from './smtp-target.server.ts'

describe('SMTP_URL as the mail pool takes it', () => {
	test('credentials to a relay off this machine require STARTTLS on smtp://; smtps:// is TLS already; no credentials, no demand', () => {
		expect(smtpTarget('smtp://mailer:s3cret@smtp.example.com:587')).toEqual({
			host: 'smtp.example.com',
			port: 587,
			secure: false,
			requireTLS: true,
			auth: { user: 'mailer', pass: 's3cret' },
		})
		expect(smtpTarget('smtps://mailer:s3cret@smtp.example.com')).toMatchObject({ port: 465, secure: true, requireTLS: false })
		expect(smtpTarget('smtp://smtp.example.com')).toMatchObject({ port: 587, requireTLS: false, auth: undefined })
	})

	test.each(['localhost', 'LOCALHOST', 'localhost.', '127.0.0.1', '127.0.0.2', '[::1]', '[::ffff:127.0.0.1]'])(
		'a relay on this machine (%s) takes the login without TLS',
		(host) => {
			expect(smtpTarget(`smtp://mailer:s3cret@${host}:25`).requireTLS).toBe(false)
		},
	)

	// Names other than localhost are looked up in DNS (nodemailer asks it before /etc/hosts): any answer.
	test.each(['192.0.2.10', '10.0.0.5', '[2001:db8::1]', '[::ffff:7f00:1:2]', 'localhost.localdomain', 'mail.localhost', '127.0.0.1.'])(
		'a relay elsewhere (%s) does not',
		(host) => {
			expect(smtpTarget(`smtp://mailer:s3cret@${host}:25`).requireTLS).toBe(true)
		},
	)

	test('localhost is connected to as 127.0.0.1, never looked up', () => {
		expect(smtpTarget('smtp://LocalHost.:2525').host).toBe('127.0.0.1')
	})

	test('an IPv6 address is given without its brackets (nodemailer looked up "[::1]" as a name and failed)', () => {
		expect(smtpTarget('smtp://[::1]:2525').host).toBe('::1')
		expect(smtpTarget('smtp://[2001:db8::1]:2525').host).toBe('2001:db8::1')
	})
})
